"""Glued values where myst-nb does not paste them: figures on other pages, alt texts.

- myst-nb pastes glued *text* across pages, but ``{glue:figure}`` only works
  inside the notebook that glued the figure. The landing page shows a chapter's
  figure, so at the start of every build this writes each glued PNG of every
  notebook to ``book/_generated/<name>.png``, from the committed (nbval-checked)
  outputs.
- An image's alt text is a plain attribute, where no role is parsed. A
  ``{glue:text}`name``` written in a figure's alt text (cell metadata
  ``mystnb.image.alt``) is replaced by the glued value of that notebook, formatted
  as the prose formats it (``notebook_format.paste_glue_roles``), so alt texts
  quote computed numbers too. An unknown name fails the build.

Both read the committed outputs and never execute anything.
"""

import base64
import os
import sys
from pathlib import Path

from sphinx.errors import ExtensionError

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository root: tools/ is a package
from tools.notebook_format import GLUE_PREFIX, chapter_notebooks, glued_outputs, paste_glue_roles, read  # noqa: E402


def export_glued_figures(app):
    root = Path(app.srcdir)
    target = root / "book" / "_generated"
    target.mkdir(parents=True, exist_ok=True)
    for notebook in chapter_notebooks():
        for cell in read(notebook).cells:
            for output in cell.get("outputs", []):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                png = output.get("data", {}).get(GLUE_PREFIX + "image/png")
                if name and png:
                    data = base64.b64decode(png if isinstance(png, str) else "".join(png))
                    path = target / f"{name}.png"
                    if not path.is_file() or path.read_bytes() != data:
                        # the two editions build at once from the same sources: write whole
                        # files only, so neither build reads one half written
                        partial = path.with_name(f".{path.name}.{os.getpid()}")
                        partial.write_bytes(data)
                        os.replace(partial, path)


def paste_glue_into_alt_texts(app, doctree, docname):
    from docutils import nodes

    if app.builder.name == "gettext":
        return  # the catalogs keep the roles, so a translated alt text gets the same computed numbers
    images = [node for node in doctree.findall(nodes.image) if "{glue" in node.get("alt", "")]
    if not images:
        return
    page = Path(app.srcdir) / docname
    values: dict[Path, dict[str, str | None]] = {}

    def value(role):
        notebook = role.notebook(page)
        if notebook not in values:
            values[notebook] = {g.name: g.text for g in glued_outputs(read(notebook))} if notebook.is_file() else {}
        if values[notebook].get(role.key) is None:
            raise ExtensionError(f"{docname}: alt text names glue {role}, which {notebook.name} does not glue")
        return values[notebook][role.key]

    for node in images:
        node["alt"] = paste_glue_roles(node["alt"], value)


def setup(app):
    app.connect("builder-inited", export_glued_figures)
    app.connect("doctree-resolved", paste_glue_into_alt_texts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
