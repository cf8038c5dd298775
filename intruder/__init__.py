"""Django side of the platform: studies, participants, judgments, scoring, reports and API."""
