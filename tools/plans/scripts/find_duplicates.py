"""Groups the files under `folder` by content; prints the groups of duplicates, their
count, the number of duplicate files and the megabytes wasted by the extra copies."""
import hashlib
import json
import os
import sys

params = json.load(sys.stdin)
folder = params["folder"]
if not os.path.isdir(folder):
    print(f"not a folder: {folder}", file=sys.stderr)
    sys.exit(2)

by_size = {}
for root, _dirs, names in os.walk(folder):
    for name in names:
        path = os.path.join(root, name)
        if os.path.isfile(path) and not os.path.islink(path):
            by_size.setdefault(os.path.getsize(path), []).append(path)

groups = []
for size, paths in by_size.items():
    if len(paths) < 2:
        continue
    by_hash = {}
    for path in paths:
        with open(path, "rb") as f:
            by_hash.setdefault(hashlib.sha256(f.read()).hexdigest(), []).append(path)
    for digest, same in by_hash.items():
        if len(same) > 1:
            files = sorted(os.path.relpath(p, folder) for p in same)
            groups.append({"files": files, "size_bytes": size, "sha256": digest[:16]})

groups.sort(key=lambda g: g["files"][0])
wasted = sum(g["size_bytes"] * (len(g["files"]) - 1) for g in groups)
print(
    json.dumps(
        {
            "duplicates": groups,
            "total_duplicate_groups": len(groups),
            "total_duplicate_files": sum(len(g["files"]) for g in groups),
            "wasted_space_mb": round(wasted / 1_000_000, 2),
        }
    )
)
