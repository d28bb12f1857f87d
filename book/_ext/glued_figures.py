"""Make figures glued in a notebook available to the book's other pages.

myst-nb pastes glued *text* across pages, but ``{glue:figure}`` only works inside
the notebook that glued the figure. The landing page shows a chapter's figure,
so at the start of every build this writes each glued PNG of every notebook to
``book/_generated/<name>.png``, from the committed (nbval-checked) outputs. It
never executes anything, and the copy cannot drift from the notebook.
"""

import base64
import json
from pathlib import Path

PREFIX = "application/papermill.record/"


def export_glued_figures(app):
    root = Path(app.srcdir)
    target = root / "book" / "_generated"
    target.mkdir(parents=True, exist_ok=True)
    for notebook in sorted((root / "notebooks").glob("*.ipynb")):
        for cell in json.loads(notebook.read_text(encoding="utf-8"))["cells"]:
            for output in cell.get("outputs", []):
                name = output.get("metadata", {}).get("scrapbook", {}).get("name")
                png = output.get("data", {}).get(PREFIX + "image/png")
                if name and png:
                    data = base64.b64decode(png if isinstance(png, str) else "".join(png))
                    path = target / f"{name}.png"
                    if not path.is_file() or path.read_bytes() != data:
                        path.write_bytes(data)


def setup(app):
    app.connect("builder-inited", export_glued_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
