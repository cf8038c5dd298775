"""The one lookup of the shared research data: env override, cwd-relative, installed-safe."""

from pathlib import Path

import research_data


def test_env_var_wins_even_where_the_folder_is_missing(monkeypatch, tmp_path):
    missing = tmp_path / "nowhere"
    monkeypatch.setenv("SHARED_DATA_DIR", str(missing))
    assert research_data.shared_data_dir() == missing
    assert research_data.textwash_study_dir() == missing / "textwash_study"
    assert research_data.tria_wikiactors_dir() == missing / "tria_wikiactors"


def test_shared_data_beside_the_working_directory_is_found(monkeypatch, tmp_path):
    """An installed package has no checkout to be relative to: ../shared/data from the cwd."""
    data = tmp_path / "shared" / "data"
    data.mkdir(parents=True)
    work = tmp_path / "project"
    work.mkdir()
    monkeypatch.delenv("SHARED_DATA_DIR", raising=False)
    monkeypatch.chdir(work)
    assert research_data.shared_data_dir() == data.resolve()


def test_absent_data_names_the_first_place_tried(monkeypatch, tmp_path):
    monkeypatch.delenv("SHARED_DATA_DIR", raising=False)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(research_data, "__file__", str(tmp_path / "pkg" / "__init__.py"))
    found = research_data.shared_data_dir()
    assert found == (tmp_path.parent / "shared" / "data").resolve()
    assert not found.is_dir()
    reason = research_data.missing_reason(found)
    assert str(found) in reason and "SHARED_DATA_DIR" in reason


def test_libraries_and_the_web_side_share_the_lookup(monkeypatch, tmp_path):
    from anonymize.corpus import default_corpus_dir
    from intruder.analysis.paper import textwash_data_dir

    monkeypatch.setenv("SHARED_DATA_DIR", str(tmp_path))
    assert default_corpus_dir() == textwash_data_dir() == tmp_path / "textwash_study"
    assert textwash_data_dir(Path("elsewhere")) == Path("elsewhere")
