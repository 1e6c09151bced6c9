#!/usr/bin/env python3
"""A man page (roff) from a program's --help text, as the package ships it.

    help2man.py NAME SECTION SUMMARY VERSION < help.txt > NAME.1

The --help layout it reads: a "Usage:" line, paragraphs of description, then
"Options:" with each option as an indented "--flag VALUE" line followed by more
deeply indented lines describing it. Everything else becomes a paragraph.
"""
import sys


def roff(text: str) -> str:
    """Escapes backslashes and leading dots/quotes, as roff needs."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def main() -> None:
    name, section, summary, version = sys.argv[1:5]
    lines = sys.stdin.read().splitlines()
    out = [
        f'.TH {name.upper()} {section} "" "{version}" "User Commands"',
        ".SH NAME",
        f"{roff(name)} \\- {roff(summary)}",
    ]
    state = "start"
    paragraph: list[str] = []

    def flush():
        if paragraph:
            out.append(".PP")
            out.extend(roff(line) for line in paragraph)
            paragraph.clear()

    for line in lines:
        stripped = line.strip()
        if state == "start" and stripped.startswith("Usage:"):
            out += [".SH SYNOPSIS", ".B " + roff(stripped[len("Usage:"):].strip()), ".SH DESCRIPTION"]
            state = "description"
        elif stripped == "Options:":
            flush()
            out.append(".SH OPTIONS")
            state = "options"
        elif not stripped:
            flush()
        elif state == "options" and line.startswith("  --"):
            flush()
            out += [".TP", ".B " + roff(stripped)]
        elif state == "options" and line.startswith("      "):
            out.append(roff(stripped))
        else:
            paragraph.append(stripped)
    flush()
    out += [".SH SEE ALSO", "The README of the streams project; /usr/share/doc/sse-gateway/."]
    sys.stdout.write("\n".join(out) + "\n")


main()
