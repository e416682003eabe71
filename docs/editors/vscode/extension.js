// Starts `strata lsp` for the YAML, JSON and Markdown files of a strata project and passes it
// the `strata.*` settings (initializationOptions, then workspace/didChangeConfiguration).
const vscode = require('vscode');
const { LanguageClient } = require('vscode-languageclient/node');

let client;

function settings() {
  const config = vscode.workspace.getConfiguration('strata');
  return { inlayHints: config.get('inlayHints', true) };
}

exports.activate = () => {
  const command = vscode.workspace.getConfiguration('strata').get('path', 'strata');
  client = new LanguageClient(
    'strata',
    'strata',
    { command, args: ['lsp'] },
    {
      documentSelector: [
        { scheme: 'file', language: 'yaml' },
        { scheme: 'file', language: 'json' },
        { scheme: 'file', language: 'markdown' },
      ],
      initializationOptions: settings(),
      synchronize: { configurationSection: 'strata' },
    },
  );
  return client.start();
};

exports.deactivate = () => (client ? client.stop() : undefined);
