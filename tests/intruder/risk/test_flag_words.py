"""Every risk flag is explained, whichever attack raised it (issue 40): BM25 hits carry the
words of its score like TF-IDF's, and a flag raised by dense retrieval or TRIA alone says
why it has no words instead of showing nothing."""

from __future__ import annotations

import pytest
from django.urls import reverse

from intruder.models import Job
from intruder.risk import attack_runs
from intruder.risk.models import AttackResult, AttackRun
from intruder.services import jobs
from tests.intruder.factories import logged_in, make_description, make_study, make_text
from tests.intruder.risk_fixtures import FAST_CONFIG, risk_study

pytestmark = pytest.mark.django_db


def test_a_bm25_hit_stores_the_words_that_carried_it():
    study = risk_study()
    run = attack_runs.attack_run_start(
        study=study,
        user=study.owner,
        attacks=["bm25"],
        methods=["clear"],
        folds=3,
        config=FAST_CONFIG,
    )
    job = jobs.job_execute(run.job.pk)
    assert job.status == Job.Status.SUCCEEDED, job.error
    hits = list(run.results.filter(attack="bm25", true_rank=1))
    assert hits and all(hit.driving_words for hit in hits)
    misses = run.results.exclude(true_rank=1)
    assert all(not miss.driving_words for miss in misses)


def _flag(study, text, attack, words):
    run = AttackRun.objects.filter(study=study, purpose=AttackRun.Purpose.RISK_CHECK).first()
    run = run or AttackRun.objects.create(
        study=study, purpose=AttackRun.Purpose.RISK_CHECK, attacks=["bm25", "dense"]
    )
    AttackResult.objects.create(
        run=run,
        description=text.description,
        anonymized_text=text,
        method=text.method,
        attack=attack,
        predicted_key="x",
        true_rank=1,
        driving_words=words,
    )


def test_the_review_page_explains_every_flag():
    study = make_study()
    lexical, dense = (
        make_text(study=study, description=make_description(study=study), status="draft")
        for _ in range(2)
    )
    _flag(study, lexical, "bm25", ["glassblower", "glacier"])
    _flag(study, dense, "dense", [])
    html = logged_in(study.owner).get(reverse("researcher-review", args=[study.slug]))
    html = html.content.decode()
    lexical_flag = html.split(f'data-risk-flag="{lexical.pk}"', 1)[1].split("</span>", 1)[0]
    assert "<em>glassblower, glacier</em>" in lexical_flag
    dense_flag = html.split(f'data-risk-flag="{dense.pk}"', 1)[1].split("</span></span>", 1)[0]
    assert "no single words to show: dense compares the meaning of the whole text" in dense_flag
