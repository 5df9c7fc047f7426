"""Files the GPU session writes: whole or not at all (a temporary file
renamed over the target), so a stage cut by its time limit never leaves a
half-written JSON or module for the ingest to misread."""
import json
import os


def write_text(path, text):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_json(path, value):
    write_text(path, json.dumps(value, indent=1))
