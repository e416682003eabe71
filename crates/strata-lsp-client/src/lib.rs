//! A Language Server Protocol client for `strata lsp`, as an editor drives it: it spawns
//! the binary, speaks to it over its standard input and output, keeps every message it
//! sends (to search them), and kills it by its PID when dropped. The end-to-end tests
//! (`tests/lsp.rs`) and the bench (`strata-bench --only lsp`) drive the server with it.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

/// How long a test waits for a message before it gives up on a server that hangs (a guard,
/// not a measure: every answer comes well before it).
const PATIENCE: Duration = Duration::from_secs(120);

/// A running `strata lsp` on a project.
pub struct Client {
    child: Child,
    stdin: ChildStdin,
    inbox: Receiver<Value>,
    /// Every message the server sent, as it sent it.
    pub raw: Arc<Mutex<Vec<String>>>,
    /// Notifications received while waiting for a response.
    pub notes: Vec<Value>,
    next_id: i64,
    /// The version of the last change sent.
    version: i64,
    /// The project's root.
    pub root: PathBuf,
}

/// The `file:` URI of `path` (the tests' paths are plain ASCII).
pub fn uri(path: &Path) -> String {
    format!("file://{}", path.display())
}

impl Client {
    /// Starts `bin lsp` in `root` and initializes it with `root` as the workspace and the
    /// `initializationOptions` `options`.
    pub fn start(bin: &Path, root: &Path, options: Value) -> Client {
        let mut child = Command::new(bin)
            .arg("lsp")
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("strata lsp starts");
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, inbox) = mpsc::channel();
        let raw = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&raw);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            while let Some(body) = read_frame(&mut reader) {
                kept.lock().unwrap().push(body.clone());
                if tx.send(serde_json::from_str(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let mut client = Client {
            child,
            stdin,
            inbox,
            raw,
            notes: Vec::new(),
            next_id: 0,
            version: 1,
            root: root.to_path_buf(),
        };
        let init = client.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": {}, "initializationOptions": options}),
        );
        assert!(init["result"]["capabilities"].is_object(), "{init}");
        client.notify("initialized", json!({}));
        client
    }

    /// The URI of `relative` in the project.
    pub fn uri(&self, relative: &str) -> String {
        uri(&self.root.join(relative))
    }

    /// Sends a notification.
    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (the whole message: `result` or `error`).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let message = self.next_message();
            if message["id"] == json!(id) && message.get("method").is_none() {
                return message;
            }
            self.notes.push(message);
        }
    }

    /// The next message the server sends.
    pub fn next_message(&mut self) -> Value {
        match self.inbox.recv_timeout(PATIENCE) {
            Ok(m) => m,
            Err(RecvTimeoutError::Timeout) => panic!("strata lsp sent nothing"),
            Err(RecvTimeoutError::Disconnected) => panic!("strata lsp closed its output"),
        }
    }

    /// Opens `relative` with `text`.
    pub fn open(&mut self, relative: &str, text: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    /// Replaces the range from (`line`, `from`) to (`line`, `to`) of `relative` with `text`.
    pub fn change(&mut self, relative: &str, line: u32, from: u32, to: u32, text: &str) {
        let range = json!({"start": {"line": line, "character": from}, "end": {"line": line, "character": to}});
        self.changed(relative, json!({"range": range, "text": text}));
    }

    /// Replaces the whole text of `relative` with `text`.
    pub fn set(&mut self, relative: &str, text: &str) {
        self.changed(relative, json!({"text": text}));
    }

    /// Sends `change` of `relative`, as its next version.
    fn changed(&mut self, relative: &str, change: Value) {
        self.version += 1;
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": self.version}, "contentChanges": [change]}),
        );
    }

    /// The position (`line`, `character`) of `relative`, as requests about a place take it.
    pub fn at(&self, relative: &str, line: u32, character: u32) -> Value {
        json!({"textDocument": {"uri": self.uri(relative)}, "position": {"line": line, "character": character}})
    }

    /// The server's peak resident memory so far, in bytes (Linux).
    pub fn peak_rss(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some(kb * 1024)
    }

    /// The labels of the completion offered at (`line`, `character`) of `relative`.
    pub fn completion(&mut self, relative: &str, line: u32, character: u32) -> Vec<String> {
        let uri = self.uri(relative);
        let answer = self.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}),
        );
        let items = answer["result"].as_array().expect("a list of items");
        items
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    }

    /// Closes `relative`.
    pub fn close(&mut self, relative: &str) {
        let uri = self.uri(relative);
        self.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
    }

    /// The data (the check's JSON form) of every diagnostic a pull of the workspace's gives,
    /// file by file.
    pub fn workspace_diagnostics(&mut self) -> Vec<Value> {
        let answer = self.request("workspace/diagnostic", json!({"previousResultIds": []}));
        let items = answer["result"]["items"]
            .as_array()
            .expect("a report")
            .clone();
        items
            .iter()
            .flat_map(|i| i["items"].as_array().unwrap().clone())
            .map(|d| d["data"].clone())
            .collect()
    }

    /// The full diagnostics (as the protocol has them) of `relative`, pulled.
    pub fn document_diagnostics(&mut self, relative: &str) -> Vec<Value> {
        let uri = self.uri(relative);
        let answer = self.request(
            "textDocument/diagnostic",
            json!({"textDocument": {"uri": uri}}),
        );
        answer["result"]["items"]
            .as_array()
            .expect("a report")
            .clone()
    }

    fn send(&mut self, message: Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    /// Asks the server to shut down and exit; the exit status.
    pub fn shut_down(mut self) -> Option<i32> {
        let answer = self.request("shutdown", Value::Null);
        assert_eq!(answer["result"], Value::Null, "{answer}");
        self.notify("exit", Value::Null);
        self.child.wait().unwrap().code()
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Reads one framed message (`Content-Length` header, blank line, body).
fn read_frame(reader: &mut impl BufRead) -> Option<String> {
    let mut len = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(n) = line.strip_prefix("Content-Length: ") {
            len = n.parse::<usize>().ok();
        }
    }
    let mut body = vec![0; len?];
    reader.read_exact(&mut body).ok()?;
    String::from_utf8(body).ok()
}
