"""analyse_study command and the researcher analysis page on a small database fixture."""

import json

import pandas as pd
import pytest
from django.core.management import CommandError, call_command
from django.urls import reverse

from intruder.models import PersonGroup, StudyMember
from tests.intruder.factories import (
    make_description,
    make_judgment,
    make_member,
    make_participant,
    make_study,
    make_target,
    make_text,
    make_user,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def study():
    """Two made-up targets; Nora Quill's texts get 2, 1 and 0 judgments, Otto Brand's 2."""
    study = make_study(slug="lighthouse")
    nora = make_target(study=study, group=PersonGroup.FAMOUS, name="Nora Quill", key="nora")
    otto = make_target(study=study, group=PersonGroup.FICTITIOUS, name="Otto Brand", key="otto")
    texts = [
        make_text(study=study, description=make_description(study=study, target=target))
        for target in (nora, nora, nora, otto)
    ]
    p1, p2 = make_participant(study=study), make_participant(study=study)
    # Scores are left empty: the selector scores guesses in memory.
    make_judgment(
        participant=p1,
        text=texts[0],
        self_identified=True,
        guessed_name="Nora Quill",
        revealing_text="The <b>lighthouse</b> on the fjord",
    )
    make_judgment(participant=p2, text=texts[0], position=2, slot=2, guessed_name="")
    make_judgment(participant=p1, text=texts[1], position=3, guessed_name="Quill Nora")
    make_judgment(participant=p1, text=texts[3], position=4, guessed_name="Anna Smith")
    make_judgment(
        participant=p2,
        text=texts[3],
        position=5,
        slot=2,
        self_identified=True,
        guessed_name="Otto Brand",
    )
    return study


def test_command_writes_every_table_with_hand_checked_numbers(study, tmp_path, capsys):
    call_command("analyse_study", "lighthouse", "--out", str(tmp_path), "--no-construct-loss")
    # The rate as the risk report gives it: Wilson interval, k of n; no SE (issue 35).
    printed = capsys.readouterr().out
    assert "% (95 % CI " in printed and " texts identified" in printed and "SE" not in printed
    rates = pd.read_csv(tmp_path / "rates_target.csv").set_index("target_key")
    # Nora: text 1 mean (1 + 0) / 2 = 0.5, text 2 the anagram "Quill Nora" = 1.0, text 3
    # unjudged -> 1 of 2 identified, SE = 100 * sqrt(0.25 / 1) = 50.
    assert rates.loc["nora", "n"] == 2
    assert rates.loc["nora", "n_texts_unjudged"] == 1
    assert rates.loc["nora", "mean_cosine"] == pytest.approx(0.75)
    assert rates.loc["nora", "pct_identified"] == pytest.approx(50.0)
    assert rates.loc["nora", "se_pct_identified"] == pytest.approx(50.0)
    # Wilson 1 of 2: 9.5 to 90.5 (statsmodels), beside the paper's SE.
    assert rates.loc["nora", "ci_low"] == pytest.approx(9.45, abs=0.01)
    assert rates.loc["nora", "ci_high"] == pytest.approx(90.55, abs=0.01)
    assert rates.loc["otto", "note"] == "one text: SD and SE undefined"
    for name in ("per_text", "agreement_overall", "leakage_identified", "anonymisability"):
        assert (tmp_path / f"{name}.csv").is_file()
        assert isinstance(json.loads((tmp_path / f"{name}.json").read_text()), list)
    plot = (tmp_path / "plot_target_rates.svg").read_text()
    assert plot.startswith("<svg")
    # Titled and described for screen readers (an image with a text alternative).
    assert 'role="img"' in plot.split(">", 1)[0]
    assert "<title>Texts identified per target</title><desc>Horizontal bar chart" in plot
    layout = pd.read_csv(tmp_path / "layout_table4_7.csv")
    assert list(layout["Name"]) == ["Nora Quill", "Otto Brand"]
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert any("one judgment only" in w for w in summary["warnings"])
    assert summary["overall"]["n_judgments"] == 5
    leakage = pd.read_csv(tmp_path / "leakage_identified.csv")
    assert {"lighthouse", "fjord"} <= set(leakage["ngram"])


def test_command_reports_a_study_without_judgments(tmp_path, capsys):
    study = make_study(slug="empty")
    make_text(study=study)
    call_command("analyse_study", "empty", "--out", str(tmp_path), "--no-construct-loss")
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert "no judgments yet" in summary["warnings"][0]
    assert "overall" not in summary
    assert "no judgments yet" in capsys.readouterr().err


def test_command_refuses_an_unknown_study(tmp_path):
    with pytest.raises(CommandError, match="no study with slug"):
        call_command("analyse_study", "nope", "--out", str(tmp_path))


def test_command_refuses_a_threshold_outside_the_unit_interval(study, tmp_path):
    with pytest.raises(CommandError, match="threshold"):
        call_command("analyse_study", "lighthouse", "--out", str(tmp_path), "--threshold", "2")


@pytest.mark.parametrize(
    ("who", "expected"),
    [
        ("anonymous", 302),
        ("stranger", 404),
        ("annotator", 404),
        ("viewer", 200),
        ("editor", 200),
        ("owner", 200),
        ("superuser", 200),
    ],
)
def test_analysis_page_access_matrix(client, study, who, expected):
    users = {
        "stranger": make_user(),
        "annotator": make_member(study=study, role=StudyMember.Role.ANNOTATOR),
        "viewer": make_member(study=study, role=StudyMember.Role.VIEWER),
        "editor": make_member(study=study, role=StudyMember.Role.EDITOR),
        "owner": study.owner,
        "superuser": make_user(is_superuser=True, is_staff=True),
    }
    if who != "anonymous":
        client.force_login(users[who])
    for url in (
        reverse("analysis-study", args=[study.slug]),
        reverse("analysis-table", args=[study.slug, "rates_target", "csv"]),
    ):
        response = client.get(url)
        assert response.status_code == expected, url
        if who == "anonymous":
            assert "/accounts/login/" in response["Location"]


def test_analysis_page_shows_tables_plots_and_escapes_participant_text(client, study):
    client.force_login(study.owner)
    response = client.get(reverse("analysis-study", args=[study.slug]))
    html = response.content.decode()
    assert "Per target person" in html
    assert "Table 9 layout" in html
    assert "<svg" in html
    assert "Nora Quill" in html
    assert "<b>lighthouse" not in html  # a participant's markup never reaches the page raw
    assert "one judgment only" in html  # warnings are shown
    # The headline rate with its Wilson interval and k of n, as in the risk report.
    headline = html[html.index("Headline") :]
    assert "Judged texts identified: <strong>" in headline and "% (95 % CI " in headline
    assert "(SE " not in headline[: headline.index("</div>")]


def test_analysis_download_returns_csv_and_json(client, study):
    client.force_login(study.owner)
    csv = client.get(reverse("analysis-table", args=[study.slug, "rates_group", "csv"]))
    assert csv["Content-Type"].startswith("text/csv")
    assert csv.content.decode().splitlines()[0].startswith("group,n,")
    data = client.get(reverse("analysis-table", args=[study.slug, "summary", "json"])).json()
    assert data["overall"]["n_judgments"] == 5
    missing = client.get(reverse("analysis-table", args=[study.slug, "nonsense", "csv"]))
    assert missing.status_code == 404


def test_unanalysable_data_gets_a_clear_page_not_a_crash(client, study, monkeypatch):
    from intruder.analysis import page as analysis_page
    from intruder.analysis.frames import AnalysisInputError

    def broken(*args, **kwargs):
        raise AnalysisInputError("2 judgment(s) refer to texts not in the texts frame")

    monkeypatch.setattr(analysis_page, "study_report", broken)
    client.force_login(study.owner)
    page = client.get(reverse("analysis-study", args=[study.slug]))
    assert page.status_code == 200
    assert "refer to texts not in the texts frame" in page.content.decode()
    table = client.get(reverse("analysis-table", args=[study.slug, "per_text", "csv"]))
    assert table.status_code == 409
