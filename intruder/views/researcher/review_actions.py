"""The review page's actions, one small form each: what an action posts, checked, and what it does.

Every form of the review page posts an `action` and the text's `revision` (the page's copy,
so a change made meanwhile by someone else is refused, never overwritten); `ACTIONS` maps
the action to its form. A form that does not validate says which field is wrong; a service
that refuses raises (`StaleRevisionError`, `SpanEditError`, `StatusError`), and the view
turns that into a message (`errors_as_messages`).
"""

from __future__ import annotations

from typing import Any, ClassVar

from django import forms

from intruder.models import AnonymizedText
from intruder.selectors.leak_checks import blocking_leaks
from intruder.services import review

REVISION_MISSING = "The form is missing its revision; reload the page."


class ReviewAction(forms.Form):
    """One action on one anonymized text at the revision the page showed."""

    revision = forms.IntegerField(
        min_value=1, error_messages={"required": REVISION_MISSING, "invalid": REVISION_MISSING}
    )
    done: ClassVar[str] = "Saved; text re-rendered."

    def apply(self, text: AnonymizedText, user: Any) -> str:
        """Do the action (a service call that may refuse); return what the page then says."""
        review.anonymized_text_set_spans(
            text=text,
            spans=self.spans(text),
            expected_revision=self.cleaned_data["revision"],
            user=user,
        )
        return self.done

    def spans(self, text: AnonymizedText) -> list[dict]:
        """Return the text's spans after the edit (span actions)."""
        raise NotImplementedError


class RemoveSpan(ReviewAction):
    index = forms.IntegerField(min_value=0)

    def spans(self, text: AnonymizedText) -> list[dict]:
        return review.spans_without(text.spans, self.cleaned_data["index"])


class RemoveSame(RemoveSpan):
    def spans(self, text: AnonymizedText) -> list[dict]:
        return review.spans_without_same(text.spans, self.cleaned_data["index"])


class SetCategory(ReviewAction):
    index = forms.IntegerField(min_value=0)
    category = forms.CharField(required=False)

    def spans(self, text: AnonymizedText) -> list[dict]:
        data = self.cleaned_data
        return review.spans_with_category(text.spans, data["index"], data["category"])


class SetBounds(ReviewAction):
    index = forms.IntegerField(min_value=0)
    start = forms.IntegerField(min_value=0)
    end = forms.IntegerField(min_value=0)

    def spans(self, text: AnonymizedText) -> list[dict]:
        data = self.cleaned_data
        return review.spans_with_bounds(
            text.description.text, text.spans, data["index"], data["start"], data["end"]
        )


class AddRange(ReviewAction):
    start = forms.IntegerField(min_value=0)
    end = forms.IntegerField(min_value=0)
    category = forms.CharField(required=False)

    def spans(self, text: AnonymizedText) -> list[dict]:
        data = self.cleaned_data
        return review.spans_with_range(
            text.description.text, text.spans, data["start"], data["end"], data["category"]
        )


class AddSpan(ReviewAction):
    needle = forms.CharField(required=False, strip=False)
    category = forms.CharField(required=False)
    whole_words = forms.BooleanField(required=False)

    def spans(self, text: AnonymizedText) -> list[dict]:
        data = self.cleaned_data
        return review.spans_with_string(
            text.description.text,
            text.spans,
            data["needle"],
            data["category"],
            whole_words=data["whole_words"],
        )


class MarkReviewed(ReviewAction):
    reviewed: ClassVar[bool] = True
    done = "Marked reviewed."

    def apply(self, text: AnonymizedText, user: Any) -> str:
        review.anonymized_text_mark_reviewed(
            text=text,
            user=user,
            expected_revision=self.cleaned_data["revision"],
            reviewed=self.reviewed,
        )
        return self.done


class UnmarkReviewed(MarkReviewed):
    reviewed = False
    done = "Review mark removed."


class EditText(ReviewAction):
    text = forms.CharField(required=False, strip=False)
    done = "Text saved."

    def apply(self, text: AnonymizedText, user: Any) -> str:
        review.anonymized_text_set_text(
            text=text,
            new_text=self.cleaned_data["text"],
            expected_revision=self.cleaned_data["revision"],
            user=user,
        )
        return self.done


class SetStatus(ReviewAction):
    status: ClassVar[str]

    def apply(self, text: AnonymizedText, user: Any) -> str:
        review.anonymized_text_set_status(
            text=text,
            status=self.status,
            user=user,
            expected_revision=self.cleaned_data["revision"],
        )
        return f"Text is now {self.status}."


class Release(SetStatus):
    """Release to intruders; a text with leak warnings only with the box ticked."""

    status = AnonymizedText.Status.RELEASED
    confirm_leak = forms.BooleanField(required=False)
    next = forms.IntegerField(required=False, min_value=1)  # the text the page goes on to

    def apply(self, text: AnonymizedText, user: Any) -> str:
        if blocking_leaks(text) and not self.cleaned_data["confirm_leak"]:
            raise review.StatusError(
                "the text has leak warnings. Tick \u201cI have read the warnings\u201d to "
                "release it anyway"
            )
        return super().apply(text, user)


class Withdraw(SetStatus):
    status = AnonymizedText.Status.WITHDRAWN


class Reopen(SetStatus):
    status = AnonymizedText.Status.DRAFT


ACTIONS: dict[str, type[ReviewAction]] = {
    "remove_span": RemoveSpan,
    "remove_same": RemoveSame,
    "set_category": SetCategory,
    "set_bounds": SetBounds,
    "add_range": AddRange,
    "add_span": AddSpan,
    "mark_reviewed": MarkReviewed,
    "unmark_reviewed": UnmarkReviewed,
    "edit_text": EditText,
    "release": Release,
    "withdraw": Withdraw,
    "reopen": Reopen,
}
