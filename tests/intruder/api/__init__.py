# The researcher API's list resources, as the tests expect the router to publish them.
RESOURCES = (
    "studies",
    "targets",
    "descriptions",
    "anonymized-texts",
    "participants",
    "judgments",
    "jobs",
)
