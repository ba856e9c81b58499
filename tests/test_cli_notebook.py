"""Notebooks: code cells linted as one module, magics blanked, findings located by cell, fixes written back."""

from __future__ import annotations

import json


def notebook(*cells: tuple[str, str], language: str = "python") -> str:
    return json.dumps(
        {
            "cells": [
                {
                    "cell_type": kind,
                    "metadata": {},
                    "source": text.splitlines(keepends=True),
                    "outputs": [],
                    "execution_count": None,
                }
                if kind == "code"
                else {"cell_type": kind, "metadata": {}, "source": text}
                for kind, text in cells
            ],
            "metadata": {"kernelspec": {"language": language, "name": "k", "display_name": "k"}},
            "nbformat": 4,
            "nbformat_minor": 5,
        },
        indent=1,
    )


NOTEBOOK = notebook(
    ("markdown", "# A title\nprint(bad)\n"),
    ("code", "%matplotlib inline\nimport jax\n"),
    ("code", "!pip list\nx = !ls\njax.numpy.sum?\nfor i in range(2):\n    %time y = 1\nprint(bad)\n"),
    ("code", "%%bash\necho print(bad)\n"),
    ("code", "%%time\nprint(1)  # noqa: JAX098\nprint(2)\n"),
)


def test_findings_carry_their_cell_and_cell_relative_rows(cli, make_files, test_rules, tmp_path):
    make_files({"n.ipynb": NOTEBOOK})
    found = cli("check", "--output-format", "json").json
    assert [(f["code"], f["cell"], f["location"]["row"], f["noqa_row"]) for f in found] == [
        ("JAX098", 3, 6, 6),
        ("JAX099", 3, 6, 6),
        ("JAX098", 5, 3, 3),
    ]
    assert found[0]["filename"] == str(tmp_path / "n.ipynb")


def test_text_output_names_the_cell(cli, make_files, test_rules):
    make_files({"n.ipynb": NOTEBOOK})
    concise = cli("check", "--output-format", "concise").stdout.splitlines()
    assert concise[0] == "n.ipynb:cell 3:6:1: JAX098 [*] `print` call"
    full = cli("check", "--select", "JAX099").stdout
    assert "6 | print(bad)\n  |       ^^^ JAX099\n" in full  # the snippet comes from the cell


def test_names_defined_in_earlier_cells_are_seen(cli, make_files, test_rules):
    make_files({"n.ipynb": notebook(("code", "import jax\n"), ("code", "print(1)\n"))})
    assert [f["cell"] for f in cli("check", "--output-format", "json").json] == [2]


def test_non_python_notebook_is_skipped(cli, make_files, test_rules):
    make_files({"n.ipynb": notebook(("code", "import jax\nprint(1)\n"), language="R")})
    assert cli("check").code == 0


def test_invalid_notebook_is_jax001(cli, make_files):
    make_files({"n.ipynb": "{not json", "m.ipynb": "[]"})
    assert [f["code"] for f in cli("check", "--output-format", "json").json] == ["JAX001", "JAX001"]


def test_fix_writes_the_notebook_back(cli, make_files, test_rules, tmp_path):
    make_files({"n.ipynb": NOTEBOOK})
    out = cli("check", "--fix", "--select", "JAX098")
    assert out.code == 0
    cells = json.loads((tmp_path / "n.ipynb").read_text())["cells"]
    assert cells[2]["source"][-1] == "jax.debug.print(bad)\n"
    assert cells[2]["source"][0] == "!pip list\n"  # magics are kept as written
    assert cells[4]["source"] == ["%%time\n", "print(1)  # noqa: JAX098\n", "jax.debug.print(2)\n"]
    assert cells[0]["source"] == "# A title\nprint(bad)\n"


def test_diff_shows_cells(cli, make_files, test_rules, tmp_path):
    make_files({"n.ipynb": NOTEBOOK})
    out = cli("check", "--diff", "--select", "JAX098")
    assert out.code == 1
    assert "--- n.ipynb:cell 3\n+++ n.ipynb:cell 3\n" in out.stdout
    assert "-print(2)\n+jax.debug.print(2)\n" in out.stdout
    assert (tmp_path / "n.ipynb").read_text() == NOTEBOOK


def test_python_lines_that_look_like_magics_are_kept(cli, make_files, test_rules):
    cell = "import jax\nx = ('%d'\n     % 3)\nok = (x\n      != 'y')\nprint(x)\n"
    make_files({"n.ipynb": notebook(("code", cell))})
    assert [(f["code"], f["location"]["row"]) for f in cli("check", "--output-format", "json").json] == [
        ("JAX098", 6)
    ]


def test_lines_named_in_messages_are_counted_within_cells(cli, make_files):
    make_files(
        {
            "keys.ipynb": notebook(
                ("code", "import jax\nkey = jax.random.key(0)\n"),
                ("code", "a = jax.random.normal(key, (2,))\nb = jax.random.normal(key, (2,))\n"),
                ("code", "c = jax.random.uniform(key)\n"),
            )
        }
    )
    found = [f for f in cli("check", "--output-format", "json").json if f["code"] == "JAX201"]
    assert [(f["cell"], f["location"]["row"]) for f in found] == [(2, 2), (3, 1)]
    # the first use is line 1 of cell 2, wherever the message is read from
    assert "line 1" in found[0]["message"] and "line 3" not in found[0]["message"]
    assert "line 1 of cell 2" in found[1]["message"]


# A notebook as another tool wrote it: two-space indentation, escapes Jupyter would not write
# (`\u001B` in an output, `\u00e9` in a source line), a string source, no final newline.
WRITTEN_ELSEWHERE = (
    '{\n  "cells": [\n    {\n      "cell_type": "code",\n      "execution_count": 1,\n      "metadata": {},\n'
    '      "outputs": [{"name": "stdout", "output_type": "stream", "text": ["\\u001B[31mred\\u001B[0m\\n"]}],\n'
    '      "source": [\n        "import jax\\n",\n        "# caf\\u00e9\\n",\n        "t = jax.tree_map(abs, [1])\\n",\n'
    '        "u = 1"\n      ]\n    },\n'
    '    {\n      "cell_type": "code",\n      "execution_count": null,\n      "metadata": {"tags": ["\\u00e9"]},\n'
    '      "outputs": [],\n      "source": "v = jax.tree_leaves([1])\\n"\n    },\n'
    '    {\n      "cell_type": "code",\n      "execution_count": null,\n      "metadata": {},\n      "outputs": [],\n'
    '      "source": "w = 2\\n"\n    }\n  ],\n'
    '  "metadata": {"kernelspec": {"display_name": "k", "language": "python", "name": "k"}},\n'
    '  "nbformat": 4,\n  "nbformat_minor": 5\n}'
)


def test_fix_changes_only_the_edited_cells_source(cli, make_files, tmp_path):
    make_files({"n.ipynb": WRITTEN_ELSEWHERE, "jaxlint.toml": 'select = ["JAX6"]\n'})
    assert cli("check", "--fix", "n.ipynb").code == 0
    expected = WRITTEN_ELSEWHERE.replace("jax.tree_map(", "jax.tree.map(").replace("jax.tree_leaves(", "jax.tree.leaves(")
    assert (tmp_path / "n.ipynb").read_text(encoding="utf-8") == expected
    # the untouched lines of an edited cell keep their own spelling; the notebook still reads
    assert '"# caf\\u00e9\\n"' in expected and json.loads(expected)["cells"][0]["source"][2] == "t = jax.tree.map(abs, [1])\n"


def test_a_source_that_grows_lines_keeps_the_list_layout(cli, make_files, tmp_path):
    text = (
        '{\n "cells": [\n  {\n   "cell_type": "code",\n   "metadata": {},\n   "outputs": [],\n   "source": [\n'
        '    "import jax.numpy as jnp\\n",\n    "def f(x: jnp.DeviceArray):\\n",\n    "    return x"\n   ]\n  }\n ],\n'
        ' "metadata": {},\n "nbformat": 4,\n "nbformat_minor": 5\n}\n'
    )
    make_files({"n.ipynb": text, "jaxlint.toml": 'select = ["JAX6"]\n'})
    cli("check", "--fix", "n.ipynb")
    expected = text.replace('"import jax.numpy', '"import jax\\n",\n    "import jax.numpy').replace("jnp.DeviceArray", "jax.Array")
    assert (tmp_path / "n.ipynb").read_text() == expected
