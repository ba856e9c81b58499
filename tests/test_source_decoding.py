"""Decoding a file's bytes: where a file that is not text in its encoding stops being text."""

from __future__ import annotations

import pytest

from jaxlint.source import SourceError, decode


@pytest.mark.parametrize(
    ("data", "row", "column"),
    [
        (b"x = '\xff'\n", 1, 6),
        (b"x = 1\ny = '\xe9'\n", 2, 6),
        (b"x = 1\r\ny = 2\rz = '\xe9'\n", 3, 6),  # every line break Python counts
        (b"s = '\xc3\xa9\xc3\xa9'  # \xe9\n", 1, 13),  # columns count characters, not bytes
        (b"# coding: ascii\nx = '\xc3\xa9'\n", 2, 6),  # not what it declares
        (b"# -*- coding: nonsense -*-\nx = 1\n", 1, 1),  # a declaration that names no codec
        (b"#!/usr/bin/env python\n# coding: nonsense\n", 2, 1),
        (b"x = 1\ny = '\xe9'\n\n", 2, 6),
    ],
)
def test_an_undecodable_file_is_placed_where_it_stops_being_text(data, row, column):
    with pytest.raises(SourceError) as raised:
        decode(data)
    assert (raised.value.row, raised.value.column) == (row, column)
    assert f"line {row}" in str(raised.value)


def test_the_byte_offset_and_the_byte_are_named():
    with pytest.raises(SourceError, match=r"byte offset 11\b.*0xe9"):
        decode(b"x = 1\ny = '\xe9'\n")


def test_text_in_its_declared_encoding_decodes():
    assert decode(b"# coding: latin-1\nx = '\xe9'\n") == "# coding: latin-1\nx = '\xe9'\n"


def test_a_declaration_that_contradicts_a_bom_is_refused_on_its_line():
    with pytest.raises(SourceError) as raised:
        decode(b"\xef\xbb\xbf# coding: latin-1\nx = 1\n")  # a BOM says UTF-8, the declaration otherwise
    assert raised.value.row == 1
