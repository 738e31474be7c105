"""experiments/link_report_images.py: an embedded plot becomes a link to the identical PNG beside its page, and
nothing else changes (a plot with no identical file stays embedded)."""

import base64

from experiment_scripts import load_script

link = load_script("link_report_images.py")


def _img(data: bytes) -> str:
    return f"<img alt='x' src='data:image/png;base64,{base64.b64encode(data).decode()}'>"


def test_an_embedded_png_becomes_a_link_to_the_identical_file_beside_the_page(tmp_path):
    first, second, unsaved = b"\x89PNG first plot", b"\x89PNG second plot", b"\x89PNG drawn but not saved"
    (tmp_path / "pct.png").write_bytes(first)
    (tmp_path / "roofline.png").write_bytes(second)
    page = tmp_path / "report.html"
    page.write_text(f"<p>a</p>{_img(second)}<p>b</p>{_img(first)}{_img(unsaved)}", encoding="utf-8")
    assert link.link_images(page) == (2, 1)
    text = page.read_text(encoding="utf-8")
    assert "src='roofline.png'" in text and "src='pct.png'" in text
    assert text.index("roofline.png") < text.index("pct.png")  # each image keeps its place
    assert text.count("data:image/png;base64,") == 1  # the one with no identical file stays embedded
    assert text.startswith("<p>a</p>") and "<p>b</p>" in text
    assert link.link_images(page) == (0, 1)  # a second pass changes nothing
