"""`strata lsp` driven over stdio by pytest-lsp, a client written elsewhere: diagnostics
pulled as an edit is typed and mended, completion, hover and rename of a parameter, inlay
hints switched off by the settings, and a secret of `.env` in no byte the server sends."""

import atexit
import os
import pathlib
import shutil
import sys
import tempfile

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

HERE = pathlib.Path(__file__).resolve().parent
REPO = HERE.parents[3]
STRATA = os.environ.get("STRATA_BIN", str(REPO / "target" / "debug" / "strata"))
CANARY = "canary-5c2e81"
SCRATCH = pathlib.Path(tempfile.mkdtemp(prefix="strata-pytest-lsp"))
atexit.register(shutil.rmtree, SCRATCH, True)
RECORD = SCRATCH / "sent.bin"
PROJECT = SCRATCH / "project"
TOOL = "tools/t/h.yaml"
TEXT = (
    "executor: runtimes/python\n"
    "secrets: [API_TOKEN]\n"
    "parameters:\n"
    "  type: object\n"
    "  properties:\n"
    "    name: {type: string, default: world}\n"
    "config:\n"
    "  script: run.py\n"
    "  greeting: hello\n"
    '  input_data: "{greeting} {name} ${API_TOKEN} ${CANARY}"\n'
)


def project() -> pathlib.Path:
    """The project the server opens: the Python runtime, `.env` with the canary, TOOL."""
    for runtime in ["python", "subprocess"]:
        target = PROJECT / "tools" / "runtimes" / f"{runtime}.yaml"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / "tools" / "runtimes" / f"{runtime}.yaml", target)
    (PROJECT / ".env").write_text(f"CANARY={CANARY}\n")
    (PROJECT / TOOL).parent.mkdir(parents=True, exist_ok=True)
    (PROJECT / TOOL).write_text(TEXT)
    return PROJECT


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=[sys.executable, str(HERE / "relay.py"), STRATA, "lsp"],
        server_env={**os.environ, "STRATA_LSP_RECORD": str(RECORD)},
    ),
)
async def client(lsp_client: LanguageClient):
    root = project()
    params = types.InitializeParams(
        capabilities=client_capabilities("visual-studio-code"),
        root_uri=root.as_uri(),
        initialization_options={"inlayHints": True},
    )
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
    sent = RECORD.read_bytes()
    assert b'"result"' in sent
    assert CANARY.encode() not in sent


def uri() -> str:
    return (PROJECT / TOOL).as_uri()


def at(line: int, character: int) -> types.TextDocumentPositionParams:
    return types.TextDocumentPositionParams(
        text_document=types.TextDocumentIdentifier(uri=uri()),
        position=types.Position(line=line, character=character),
    )


def whole(text: str) -> types.DidChangeTextDocumentParams:
    return types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri(), version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
    )


def opened(client: LanguageClient) -> None:
    """Opens TOOL as it is on disk."""
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(
                uri=uri(), language_id="yaml", version=1, text=TEXT
            )
        )
    )


async def pulled(client: LanguageClient) -> list:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(
            text_document=types.TextDocumentIdentifier(uri=uri())
        )
    )
    return list(report.items)


@pytest.mark.asyncio
async def test_a_mistake_typed_is_diagnosed_and_its_fix_clears_it(client: LanguageClient):
    opened(client)
    assert await pulled(client) == []
    client.text_document_did_change(whole(TEXT.replace("{name}", "{nme}")))
    found = [
        (d.range.start.line, d.range.start.character, d.severity, d.message)
        for d in await pulled(client)
    ]
    assert found == [
        (
            5,
            10,
            types.DiagnosticSeverity.Warning,
            "parameter `name` never reaches the tool\nhelp: use `{name}` in the config, "
            "or `{params_json}` to pass every parameter",
        ),
        (
            9,
            26,
            types.DiagnosticSeverity.Error,
            "unknown parameter `{nme}`: it is left as written\nhelp: did you mean `{name}`?",
        ),
    ]
    client.text_document_did_change(whole(TEXT))
    assert await pulled(client) == []


@pytest.mark.asyncio
async def test_completion_hover_and_rename_of_a_parameter(client: LanguageClient):
    opened(client)
    offered = await client.text_document_completion_async(
        types.CompletionParams(**vars_of(at(9, 16)))
    )
    items = offered.items if hasattr(offered, "items") else offered
    labels = {item.label for item in items}
    assert {"name", "greeting", "script"} <= labels
    hover = await client.text_document_hover_async(types.HoverParams(**vars_of(at(9, 17))))
    assert hover.contents.value.startswith("**`greeting`**: config key · layer params (P)")
    secret = await client.text_document_hover_async(types.HoverParams(**vars_of(at(9, 36))))
    assert "value: `***`" in secret.contents.value
    edit = await client.text_document_rename_async(
        types.RenameParams(**vars_of(at(9, 28)), new_name="who")
    )
    edits = sorted(
        (e.range.start.line, e.range.start.character, e.new_text)
        for e in edit.changes[uri()]
    )
    assert edits == [(5, 4, "who"), (9, 27, "who")]


@pytest.mark.asyncio
async def test_inlay_hints_are_switched_off_by_the_settings(client: LanguageClient):
    opened(client)
    whole_file = types.Range(
        start=types.Position(line=0, character=0),
        end=types.Position(line=10, character=0),
    )
    params = types.InlayHintParams(
        text_document=types.TextDocumentIdentifier(uri=uri()), range=whole_file
    )
    shown = await client.text_document_inlay_hint_async(params)
    assert [h.label for h in shown] == ["= hello", '= "world" (default)', "= ***", "= ***"]
    client.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"strata": {"inlayHints": False}})
    )
    assert list(await client.text_document_inlay_hint_async(params)) == []


def vars_of(position: types.TextDocumentPositionParams) -> dict:
    return {"text_document": position.text_document, "position": position.position}
