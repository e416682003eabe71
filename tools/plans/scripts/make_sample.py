"""Writes sample files, some of them duplicates, under `folder`; prints {"folder": folder}."""
import json
import os
import sys

params = json.load(sys.stdin)
folder = params["folder"]
files = {
    "notes.txt": "meeting at ten\n",
    "copy of notes.txt": "meeting at ten\n",
    "photos/beach.jpg": "JPEG" + "~" * 200_000,
    "backup/beach.jpg": "JPEG" + "~" * 200_000,
    "old/beach (1).jpg": "JPEG" + "~" * 200_000,
    "report.md": "# Q1\n",
}
for name, text in files.items():
    path = os.path.join(folder, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
print(json.dumps({"folder": folder}))
