"""Writes of annotation projects: creation, documents, suggestions, assignment, autosave, import.

Assignment follows the intruder studies' policy (`intruder/services/assignment.py`): lazy,
one document at a time, among those with the fewest held slots; the partial unique
constraint on (document, slot) makes over-assignment impossible, and a lost race is retried
in a savepoint. Saves are whole-task replacements guarded by `revision` (optimistic locking),
so two tabs or two devices never silently overwrite each other.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Count, F, Q
from django.utils import timezone

from anonymize.annotations.schema import (
    CONFIDENTIAL_STATUSES,
    IDENTIFIER_TYPES,
    SCHEMES,
    AnnotatedDocument,
    category_for_scheme,
    snap_to_words,
)
from intruder.annotation.linked import pid_in_project_linked_study, studies_linked_to_project
from intruder.annotation.models import (
    HELD_STATUSES,
    Annotator,
    Document,
    Mention,
    Project,
    ProjectMember,
    SuggestionDecision,
    Task,
)
from intruder.annotation.selectors import task_state
from intruder.enrolment import EnrolmentRefused, new_enrolment_check, prolific_pid_check
from intruder.exceptions import IntruderError
from intruder.models import AnonymizedText, Description, Job, Study
from intruder.selectors.access import study_role
from intruder.services import anonymization
from intruder.services.jobs import ACTIVE_STATUSES, JobAlreadyActive, job_enqueue

if TYPE_CHECKING:
    from anonymize import TextAnonymizer

ASSIGN_ATTEMPTS = 30
MAX_MENTIONS_PER_TASK = 2000


class SaveConflict(IntruderError):
    """The task changed since the client loaded it; carries the current state."""

    status_code = 409

    def __init__(self, state: dict[str, Any]) -> None:
        super().__init__("the task changed since it was loaded")
        self.state = state

    def api_body(self) -> dict[str, Any]:
        """Return the conflict with the current state, which the page merges into its own."""
        return {"detail": "changed elsewhere", "current": self.state}


def scheme_categories(scheme: str, custom: Sequence[str] = ()) -> list[str]:
    """Return the categories of a scheme; a custom scheme needs its own list."""
    if scheme == Project.Scheme.CUSTOM:
        names = [c.strip().upper().replace(" ", "_") for c in custom if c.strip()]
        if not names:
            raise ValidationError({"categories": "A custom scheme needs at least one category."})
        if len(set(names)) != len(names):
            raise ValidationError({"categories": "Categories must be unique."})
        return names
    return list(SCHEMES[scheme])


def project_create(
    *,
    owner: Any,
    slug: str,
    title: str,
    scheme: str,
    custom_categories: Sequence[str] = (),
    **settings: Any,
) -> Project:
    """Create a project with its scheme's categories."""
    project = Project(
        owner=owner,
        slug=slug,
        title=title,
        scheme=scheme,
        categories=scheme_categories(scheme, custom_categories),
        **settings,
    )
    project.full_clean()
    project.save()
    return project


def project_member_set(*, project: Project, user: Any, role: str) -> ProjectMember:
    """Give a researcher a role in a project (annotator or manager)."""
    member, _ = ProjectMember.objects.update_or_create(
        project=project, user=user, defaults={"role": role}
    )
    return member


@transaction.atomic
def project_member_remove(*, project: Project, user: Any) -> int:
    """Take a researcher's role away; return how many roles were removed.

    Her submitted annotations stay (they are the project's data); the tasks API checks the
    role on every call, so an unfinished task is closed to her at once.
    """
    removed, _ = ProjectMember.objects.filter(project=project, user=user).delete()
    return removed


def documents_add(
    *,
    project: Project,
    documents: Iterable[AnnotatedDocument],
    source: str = "import",
    refs: Sequence[str] | None = None,
) -> dict[str, int]:
    """Add texts to a project (existing doc_ids are kept, not duplicated); return counts.

    All or nothing: a bad document (id too long, NUL character, unknown dataset type) raises
    ValidationError naming it, and nothing is written. Adds to one project are serialized by
    its row lock (BEGIN IMMEDIATE on SQLite), taken before the known ids are read: two posts
    of one file at once read the ids apart and both inserted them (an IntegrityError, a 500);
    now the second finds the first's texts and skips them.
    """
    documents = list(documents)
    id_limit = Document._meta.get_field("doc_id").max_length
    with transaction.atomic():
        Project.objects.select_for_update().filter(pk=project.pk).exists()
        existing = dict(project.documents.values_list("doc_id", "text"))
        created = skipped = 0
        new_documents = []
        for number, document in enumerate(documents):
            where = f"document {number + 1} ({document.doc_id[:40]!r})"
            if len(document.doc_id) > id_limit:
                raise ValidationError(f"{where}: the id is longer than {id_limit} characters")
            for field, value in (("id", document.doc_id), ("text", document.text)):
                if "\x00" in value:  # PostgreSQL stores no NUL character
                    raise ValidationError(f"{where}: the {field} holds a NUL character")
            if document.doc_id in existing:
                if existing[document.doc_id] != document.text:
                    raise ValidationError(
                        f"document {document.doc_id!r} exists with a different text; "
                        "give the new one another id"
                    )
                skipped += 1
                continue
            row = Document(
                project=project,
                doc_id=document.doc_id,
                text=document.text,
                dataset_type=document.dataset_type,
                source=source,
                source_ref=refs[number] if refs else "",
            )
            try:
                row.full_clean(exclude=["project"], validate_constraints=False)
            except ValidationError as error:
                problems = "; ".join(f"{k}: {' '.join(v)}" for k, v in error.message_dict.items())
                raise ValidationError(f"{where}: {problems}") from None
            new_documents.append(row)
            existing[document.doc_id] = document.text
            created += 1
        Document.objects.bulk_create(new_documents)
    return {"created": created, "skipped": skipped}


def documents_add_from_study(
    *, project: Project, study: Study, what: str, user: Any | None = None
) -> dict[str, int]:
    """Add a study's descriptions ("descriptions") or model-anonymized texts ("anonymized").

    With `user`, only an owner, editor or viewer of the study may (not its PSI annotators).
    Withdrawn texts are never copied.
    """
    if user is not None and study_role(user, study) is None:
        raise ValidationError("you may not copy this study's texts")
    if what == "descriptions":
        rows = list(Description.objects.filter(study=study).order_by("id"))
        docs = [AnnotatedDocument(r.external_id or f"{study.slug}-{r.pk}", r.text) for r in rows]
        return documents_add(
            project=project,
            documents=docs,
            source=Document.Source.DESCRIPTION,
            refs=[str(r.pk) for r in rows],
        )
    rows = list(
        AnonymizedText.objects.filter(description__study=study)
        .exclude(status=AnonymizedText.Status.WITHDRAWN)
        .select_related("description")
        .order_by("id")
    )
    docs = [
        AnnotatedDocument(f"{r.description.external_id or r.description_id}-{r.method}", r.text)
        for r in rows
    ]
    return documents_add(
        project=project,
        documents=docs,
        source=Document.Source.ANONYMIZED,
        refs=[str(r.pk) for r in rows],
    )


def suggestions_job_start(*, project: Project, user: Any) -> tuple[Any, bool]:
    """Queue the suggestions of the project's new texts unless a job is at it; (job, created).

    The anonymizer runs in the worker, never in the request: a 20 MB upload is minutes of
    model time.
    """
    active = suggestions_job_latest(project=project, active_only=True)
    if active is not None:
        return active, False
    try:
        job = job_enqueue(
            kind=Job.Kind.ANNOTATION_SUGGESTIONS, params={"project": project.pk}, created_by=user
        )
    except JobAlreadyActive as busy:  # a double click racing this one
        if busy.job is None:
            raise
        return busy.job, False
    return Job.objects.filter(pk=job.pk, status__in=ACTIVE_STATUSES).first() or job, True


def suggestions_job_latest(*, project: Project, active_only: bool = False) -> Any:
    """Return the project's newest suggestions job (or its active one), or None."""
    jobs = Job.objects.filter(kind=Job.Kind.ANNOTATION_SUGGESTIONS, params__project=project.pk)
    if active_only:
        jobs = jobs.filter(status__in=ACTIVE_STATUSES)
    return jobs.order_by("-created_at", "-id").first()


def suggestions_compute(
    *,
    project: Project,
    anonymizer: TextAnonymizer | None = None,
    batch_size: int = 16,
    progress: Callable[..., None] | None = None,
) -> int:
    """Store the anonymizer's spans as suggestions for documents that have none yet.

    The placeholder ("PERSON_FIRSTNAME_1") groups suggestions into entities, so accepted
    suggestions arrive already linked. Returns the number of documents processed.
    """
    pending = list(project.documents.filter(suggestions=[]).order_by("id"))
    if not pending or not project.pre_annotate:
        return 0
    anonymizer = anonymizer or anonymization.get_anonymizer()
    categories = tuple(project.categories)
    for start in range(0, len(pending), batch_size):
        if progress is not None:
            progress(start, len(pending), "pre-annotating with the anonymizer")
        batch = pending[start : start + batch_size]
        results = anonymizer.anonymize_many(
            [d.text for d in batch], threshold=project.suggestion_threshold
        )
        for document, result in zip(batch, results, strict=True):
            suggestions = []
            for span in result.spans:
                category = category_for_scheme(span.category, categories)
                if category is None:
                    continue
                suggestions.append(
                    {
                        "start": span.start,
                        "end": span.end,
                        "category": category,
                        "entity": span.placeholder or f"s{len(suggestions)}",
                        "score": round(float(span.score), 3),
                    }
                )
            document.suggestions = suggestions
        Document.objects.bulk_update(batch, ["suggestions"])
    if progress is not None:
        progress(len(pending), len(pending), "suggestions ready")
    return len(pending)


def annotator_for_user(*, project: Project, user: Any) -> Annotator:
    """Return the researcher's annotator seat in the project, creating it on first use."""
    annotator, _ = Annotator.objects.get_or_create(project=project, user=user)
    return annotator


def annotator_enroll(
    *,
    project: Project,
    prolific_pid: str,
    prolific_study_id: str = "",
    admit_new: Callable[[], bool] | None = None,
) -> Annotator:
    """Enrol a crowd annotator by Prolific PID, or return the existing one.

    A new PID meets the study side's defences (`new_enrolment_check`: the Prolific study
    ID, linked participation, the caller's rate limit), and is refused while the project is
    closed or an intruder study over the same targets is open. Raises EnrolmentRefused.
    """
    pid = prolific_pid_check(prolific_pid)
    existing = Annotator.objects.filter(project=project, prolific_pid=pid).first()
    if existing is not None:
        return existing
    new_enrolment_check(
        expected_study_id=project.prolific_study_id,
        given_study_id=prolific_study_id,
        linked=lambda: pid_in_project_linked_study(project=project, prolific_pid=pid),
        admit_new=admit_new,
    )
    if not project.is_open or project_paused(project=project):
        raise EnrolmentRefused(EnrolmentRefused.CLOSED)
    try:
        with transaction.atomic():
            return Annotator.objects.create(project=project, prolific_pid=pid)
    except IntegrityError:
        return Annotator.objects.get(project=project, prolific_pid=pid)


def project_paused(*, project: Project) -> bool:
    """Return whether crowd work must wait: an intruder study over the same targets is open.

    Already enrolled annotators keep their seat but see no original while it is open.
    """
    return studies_linked_to_project(project=project).filter(is_open=True).exists()


def project_open_set(*, project: Project, is_open: bool) -> Project:
    """Open or close a project to crowd annotators; refuse to open it beside a linked study."""
    if is_open and project_paused(project=project):
        raise ValidationError(
            "An open intruder study asks about the persons whose original descriptions this "
            "project holds: its participants could enrol here and read the answers. Close "
            "that study first."
        )
    Project.objects.filter(pk=project.pk).update(is_open=is_open)
    project.is_open = is_open
    return project


def annotator_instructions_confirm(*, annotator: Annotator) -> None:
    """Record that a crowd annotator has read the guidelines."""
    Annotator.objects.filter(pk=annotator.pk, instructions_seen_at__isnull=True).update(
        instructions_seen_at=timezone.now()
    )
    annotator.refresh_from_db()


def _free_documents(annotator: Annotator):
    project = annotator.project
    return (
        project.documents.exclude(tasks__annotator=annotator)
        .annotate(held=Count("tasks", filter=Q(tasks__status__in=HELD_STATUSES)))
        .filter(held__lt=project.annotators_per_text)
        .order_by("held", "id")
    )


def task_next(*, annotator: Annotator, rng: random.Random | None = None) -> Task | None:
    """Return the annotator's open task, or claim a slot on the least-annotated document.

    Crowd annotators stop after `texts_per_annotator` texts. None when nothing is left.
    """
    project = annotator.project
    crowd_tasks_expire(project=project)
    if annotator.prolific_pid:
        annotator.refresh_from_db(fields=["status"])
        if annotator.status != Annotator.Status.STARTED:
            return None
    current = annotator.tasks.filter(status=Task.Status.ACTIVE).order_by("id").first()
    if current is not None:
        return current
    if annotator.prolific_pid:
        done = annotator.tasks.filter(status=Task.Status.SUBMITTED).count()
        if done >= project.texts_per_annotator:
            return None
    rng = rng or random.Random()
    for _ in range(ASSIGN_ATTEMPTS):
        candidates = list(_free_documents(annotator)[:20])
        if not candidates:
            return None
        fewest = [d for d in candidates if d.held == candidates[0].held]
        document = rng.choice(fewest)
        taken = set(document.tasks.filter(status__in=HELD_STATUSES).values_list("slot", flat=True))
        slot = next((s for s in range(1, project.annotators_per_text + 1) if s not in taken), 0)
        if not slot:
            continue  # filled up since the candidates were read
        try:
            with transaction.atomic():
                return Task.objects.create(document=document, annotator=annotator, slot=slot)
        except IntegrityError:
            continue  # someone took this slot (or we hold this document) meanwhile
    raise RuntimeError("could not claim a document: too much contention, try again")


@dataclass(frozen=True)
class CleanMention:
    start: int
    end: int
    entity_type: str
    identifier_type: str
    confidential_status: str
    entity: str
    suggestion: int | None


def _clean_mentions(task: Task, mentions: Sequence[dict[str, Any]]) -> list[CleanMention]:
    """Validate and word-snap the client's mentions; raise ValidationError naming the item."""
    document = task.document
    text = document.text
    categories = set(document.project.categories)
    n_suggestions = len(document.suggestions)
    if len(mentions) > MAX_MENTIONS_PER_TASK:
        raise ValidationError(f"at most {MAX_MENTIONS_PER_TASK} mentions per text")
    cleaned, seen = [], set()
    for number, item in enumerate(mentions, start=1):
        where = f"mention {number}"
        start, end = item.get("start"), item.get("end")
        if not (isinstance(start, int) and isinstance(end, int)) or isinstance(start, bool):
            raise ValidationError(f"{where}: start and end must be integers")
        if not 0 <= start < end <= len(text):
            raise ValidationError(f"{where}: [{start}, {end}) is outside the text")
        start, end = snap_to_words(text, start, end)
        if start == end:
            raise ValidationError(f"{where}: the span holds only white space")
        if (start, end) in seen:
            raise ValidationError(f"{where}: the span [{start}, {end}) is annotated twice")
        seen.add((start, end))
        if item.get("entity_type") not in categories:
            raise ValidationError(f"{where}: unknown category {item.get('entity_type')!r}")
        if item.get("identifier_type") not in IDENTIFIER_TYPES:
            raise ValidationError(f"{where}: identifier type must be one of {IDENTIFIER_TYPES}")
        confidential = item.get("confidential_status") or "NOT_CONFIDENTIAL"
        if confidential not in CONFIDENTIAL_STATUSES:
            raise ValidationError(f"{where}: unknown confidential status {confidential!r}")
        entity = str(item.get("entity") or "").strip()[:64]
        if not entity:
            raise ValidationError(f"{where}: every mention belongs to an entity")
        suggestion = item.get("suggestion")
        if suggestion is not None and not (
            isinstance(suggestion, int) and 0 <= suggestion < n_suggestions
        ):
            raise ValidationError(f"{where}: unknown suggestion {suggestion!r}")
        cleaned.append(
            CleanMention(
                start,
                end,
                item["entity_type"],
                item["identifier_type"],
                confidential,
                entity,
                suggestion,
            )
        )
    return cleaned


# What a stored Mention copies from a cleaned or an imported (library) mention.
MENTION_FIELDS = ("start", "end", "entity_type", "identifier_type", "confidential_status")


def _mention_fields(mention: Any) -> dict[str, Any]:
    """Return the offsets and labels of a mention, as the Mention model's fields."""
    return {name: getattr(mention, name) for name in MENTION_FIELDS}


def _edit_type(mention: CleanMention, suggestions: list[dict]) -> str:
    """Return TAB's edit_type: check (suggestion kept), correct (changed), insert (new)."""
    if mention.suggestion is None:
        return "insert"
    s = suggestions[mention.suggestion]
    same = (s["start"], s["end"], s["category"]) == (
        mention.start,
        mention.end,
        mention.entity_type,
    )
    return "check" if same else "correct"


def task_save(
    *,
    task: Task,
    revision: int,
    mentions: Sequence[dict[str, Any]],
    rejected: Sequence[int] = (),
) -> Task:
    """Replace the task's mentions and suggestion decisions if nobody saved since `revision`.

    Raises SaveConflict (with the current state) when the task moved on, and ValidationError
    for bad input; nothing is written in either case.
    """
    if task.status == Task.Status.RELEASED:
        raise ValidationError("this task was released and can no longer be edited")
    cleaned = _clean_mentions(task, mentions)
    suggestions = task.document.suggestions
    used = {m.suggestion for m in cleaned if m.suggestion is not None}
    rejected_set = {r for r in rejected if isinstance(r, int) and 0 <= r < len(suggestions)}
    rejected_set -= used
    with transaction.atomic():
        moved = Task.objects.filter(pk=task.pk, revision=revision).update(
            revision=F("revision") + 1, updated_at=timezone.now()
        )
        if not moved:
            task.refresh_from_db()
            raise SaveConflict(task_state(task=task))
        task.mentions.all().delete()
        task.decisions.all().delete()
        rows = [
            Mention(
                task=task,
                **_mention_fields(m),
                entity=m.entity,
                suggestion=m.suggestion,
                edit_type=_edit_type(m, suggestions),
            )
            for m in cleaned
        ]
        Mention.objects.bulk_create(rows)
        decisions = [
            SuggestionDecision(
                task=task,
                suggestion=row.suggestion,
                decision="accepted" if row.edit_type == "check" else "corrected",
            )
            for row in rows
            if row.suggestion is not None
        ]
        # Two mentions made from one suggestion (e.g. split in two) record one decision.
        unique = {d.suggestion: d for d in decisions}
        decisions = list(unique.values()) + [
            SuggestionDecision(task=task, suggestion=index, decision="rejected")
            for index in sorted(rejected_set)
        ]
        SuggestionDecision.objects.bulk_create(decisions)
    task.refresh_from_db()
    return task


def task_submit(*, task: Task) -> None:
    """Mark a task as submitted (its annotations count for agreement and evaluation)."""
    Task.objects.filter(pk=task.pk, status=Task.Status.ACTIVE).update(
        status=Task.Status.SUBMITTED, submitted_at=timezone.now()
    )
    task.refresh_from_db()


def annotator_complete(*, annotator: Annotator) -> bool:
    """Mark a crowd annotator who has finished their work as completed; return whether they are.

    Finished: at least one submitted text and none in progress (fewer texts than asked for
    when the project ran out). Nothing else earns the completion code.
    """
    if annotator.status == Annotator.Status.COMPLETED:
        return True
    if annotator.tasks.filter(status=Task.Status.ACTIVE).exists():
        return False
    if not annotator.tasks.filter(status=Task.Status.SUBMITTED).exists():
        return False
    Annotator.objects.filter(pk=annotator.pk, status=Annotator.Status.STARTED).update(
        status=Annotator.Status.COMPLETED, completed_at=timezone.now()
    )
    annotator.refresh_from_db()
    return annotator.status == Annotator.Status.COMPLETED


def crowd_tasks_expire(*, project: Project, now: datetime | None = None) -> int:
    """Release crowd tasks untouched for the project's time limit; return how many.

    Their annotators time out (no completion code), and the slots go to the next annotator.
    """
    now = now or timezone.now()
    cutoff = now - timedelta(minutes=project.task_time_limit_minutes)
    stale = Task.objects.filter(
        document__project=project,
        status=Task.Status.ACTIVE,
        annotator__prolific_pid__gt="",
        updated_at__lt=cutoff,
    )
    with transaction.atomic():
        annotators = list(stale.values_list("annotator_id", flat=True))
        if not annotators:
            return 0
        released = Task.objects.filter(pk__in=stale.values("pk")).update(
            status=Task.Status.RELEASED, updated_at=now
        )
        Annotator.objects.filter(pk__in=annotators, status=Annotator.Status.STARTED).update(
            status=Annotator.Status.TIMED_OUT
        )
    return released


def annotations_import(
    *, project: Project, documents: Sequence[AnnotatedDocument], replace: bool = False
) -> dict[str, int]:
    """Import annotation layers (from TAB, doccano or CSV) as submitted tasks.

    A layer's annotator is the researcher of that username if one is a member (or the owner),
    else an imported annotator of that name. Missing documents are created from the file's
    texts. An annotator's existing work on a document is kept unless `replace`.
    """
    from django.contrib.auth import get_user_model

    unknown = sorted(
        {m.entity_type for d in documents for ms in d.annotations.values() for m in ms}
        - set(project.categories)
    )
    if unknown:
        raise ValidationError(
            f"categories {unknown} are not in the project's scheme "
            f"({', '.join(project.categories)})"
        )
    for document in documents:
        for label, mentions in document.annotations.items():
            where = f"document {document.doc_id[:40]!r}, annotator {label[:40]!r}"
            if not label or len(label) > 100 or "\x00" in label:
                raise ValidationError(f"{where}: an annotator name has 1 to 100 characters")
            if any("\x00" in m.entity_id for m in mentions):
                raise ValidationError(f"{where}: an entity id holds a NUL character")
    users = {u.get_username(): u for u in get_user_model().objects.all()}
    counts = {"documents_created": 0, "layers": 0, "mentions": 0, "layers_kept": 0}
    with transaction.atomic():
        counts["documents_created"] = documents_add(project=project, documents=documents)["created"]
        rows = {d.doc_id: d for d in project.documents.all()}
        for document in documents:
            row = rows[document.doc_id]
            if row.text != document.text:
                raise ValidationError(f"document {document.doc_id!r}: text differs from project")
            for label, mentions in document.annotations.items():
                annotator = _import_annotator(project, label, users)
                task = Task.objects.filter(document=row, annotator=annotator).first()
                if task is not None and not replace:
                    counts["layers_kept"] += 1
                    continue
                if task is None:
                    taken = set(row.tasks.values_list("slot", flat=True))
                    slot = next(s for s in range(1, len(taken) + 2) if s not in taken)
                    task = Task.objects.create(
                        document=row,
                        annotator=annotator,
                        slot=slot,
                        status=Task.Status.SUBMITTED,
                        submitted_at=timezone.now(),
                    )
                task.mentions.all().delete()
                prefix = f"{document.doc_id}_{label}_"
                Mention.objects.bulk_create(
                    Mention(
                        task=task,
                        **_mention_fields(m),
                        entity=m.entity_id.removeprefix(prefix)[:64],
                        edit_type=m.edit_type,
                    )
                    for m in {(m.start, m.end): m for m in mentions}.values()
                )
                counts["layers"] += 1
                counts["mentions"] += len(mentions)
    return counts


def _import_annotator(project: Project, label: str, users: dict[str, Any]) -> Annotator:
    user = users.get(label)
    if user is not None and (
        project.owner_id == user.pk or project.members.filter(user=user).exists()
    ):
        return annotator_for_user(project=project, user=user)
    if label.startswith("prolific-"):
        pid = label.removeprefix("prolific-")
        annotator = Annotator.objects.filter(project=project, prolific_pid=pid).first()
        if annotator is not None:
            return annotator
    annotator, _ = Annotator.objects.get_or_create(project=project, name=label)
    return annotator
