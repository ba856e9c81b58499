"""`--output-format junit`: JUnit XML, one test suite per file and one failed test case per finding."""

from __future__ import annotations

import os
from itertools import groupby
from xml.etree import ElementTree

from jaxlint.findings import Finding
from jaxlint.output import Report, printable


def render(findings: list[Finding], report: Report) -> str:
    count = str(len(findings))
    root = ElementTree.Element(
        "testsuites", name="jaxlint", tests=count, failures=count, errors="0", skipped="0"
    )
    if not findings:
        suite = ElementTree.SubElement(root, "testsuite", name="jaxlint", tests="1", failures="0", errors="0")
        ElementTree.SubElement(suite, "testcase", name="No errors found")
    for raw_path, group in groupby(findings, key=lambda f: f.path):
        path = printable(raw_path)  # XML cannot hold control characters or undecodable bytes
        in_file = list(group)
        path = printable(raw_path)  # XML cannot hold control characters
        n = str(len(in_file))
        suite = ElementTree.SubElement(
            root, "testsuite", name=path, tests=n, failures=n, errors="0", skipped="0", package="jaxlint"
        )
        classname = os.path.splitext(path)[0]
        for f in in_file:
            where = f"line {f.start.row}, col {f.start.column}"
            if f.cell is not None:
                where = f"cell {f.cell}, {where}"
            case = ElementTree.SubElement(
                suite,
                "testcase",
                name=f"jaxlint.{f.code}",
                classname=classname,
                line=str(f.start.row),
                column=str(f.start.column),
            )
            message = printable(f.message)
            failure = ElementTree.SubElement(case, "failure", message=message)
            failure.text = f"{where}, {message}"
    ElementTree.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ElementTree.tostring(root, encoding="unicode") + "\n"
