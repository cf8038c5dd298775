"""The four anonymization prompts of paper 002 (Section 3), word for word.

Paper 002 compares its own prompt with three from the literature, each changed by the paper
to ask for a JSON-formatted list so that all four are parsed the same way: "Man vs the
machine" (Patsakis & Lykousas 2023), "Sparks" (Bubeck et al. 2023) and "Student
de-identification" (Singhal et al. 2024). `{text}` stands where the paper writes
[DOC_TO_PROTECT]. Quotes the paper's PDF rendered as paired single quotes are written as
plain double quotes here, and the Student example's link loses the angle brackets that the
PDF's Markdown added.
"""

from __future__ import annotations

from dataclasses import dataclass

DOC = "{text}"


@dataclass(frozen=True)
class AnonymizationPrompt:
    """One prompt: an optional system message, example turns, and the user template."""

    name: str
    label: str
    source: str
    system: str | None
    user: str
    # (user, assistant) turns shown before the text, for one-shot prompts.
    examples: tuple[tuple[str, str], ...] = ()

    def messages(self, text: str) -> list[dict[str, str]]:
        """Return the chat messages that ask for the PSI terms of `text`."""
        messages = [{"role": "system", "content": self.system}] if self.system else []
        for user, assistant in self.examples:
            messages += [
                {"role": "user", "content": user},
                {"role": "assistant", "content": assistant},
            ]
        messages.append({"role": "user", "content": self.user.replace(DOC, text)})
        return messages


OLDMAN = (
    "It is believed that John Oldman was better as a coach than as an athlete. In fact, many "
    "people think Smith would not have made it as far as he did at the 2004 Olympics without "
    "Oldman's training. Oldman's disappearance in 2007 remains a mystery."
)
PAPER_002_INSTRUCTION = (
    "Identify every text span (including words, dates, and numerals) in the provided TEXT "
    "that defines an attribute of the corresponding person. Return them as a JSON-formatted "
    "list, with the verbatim text spans of TEXT (including formatting) corresponding to "
    "attributes. Ensure to capture all occurrences of these text spans, including synonyms, "
    "analogues, variations and specificities. Don't be limited to named entities, any text "
    "span can be an attribute."
)

PAPER_002 = AnonymizationPrompt(
    name="paper002",
    label="Our prompt (paper 002)",
    source="Manzanares-Salor & Sánchez, paper 002, Section 3.2",
    system=(
        "You are an expert assistant. Provide no explanations and make your answers as long "
        "as required."
    ),
    user="TEXT:\n\n" + DOC,
    examples=(
        (
            PAPER_002_INSTRUCTION + "\n\nTEXT:\n\n" + OLDMAN,
            '["John Oldman", "coach", "athlete", "Smith", "2004", "Olympics", "Oldman\'s", '
            '"training", "disappearance", "2007", "remains a mystery"]',
        ),
    ),
)

MAN_VS_MACHINE = AnonymizationPrompt(
    name="man_vs_machine",
    label="Man vs the machine",
    source="Patsakis & Lykousas 2023, as given in paper 002, Section 3.1",
    system="You are an efficient assistant. Keep your responses short and provide no explanations.",
    user=(
        "Identify every token (including words, dates, and numerals) in the provided person "
        "description that can be connected to the person being talked about, such that if "
        "these tokens are removed the resulting text is anonymised. Return these words as a "
        "JSON-formatted list. The description of this person is: " + DOC
    ),
)

SPARKS = AnonymizationPrompt(
    name="sparks",
    label="Sparks",
    source="Bubeck et al. 2023, with paper 002's JSON-list instruction (Section 3.1)",
    system=None,
    user=(
        "INSTRUCTIONS:\n"
        "1. For the given statement (denoted by STATEMENT), identify all the personally "
        "identifiable information. These include:\n"
        "  a. Names of people, including nicknames/aliases, usernames and initials.\n"
        "  b. Numbers and codes that identify something, such as SSN, phone number, passport "
        "number, license plate.\n"
        "  c. Places and locations, such as: cities, areas, countries, etc. or named "
        "infrastructures (bus stops, bridges, etc.)\n"
        "  d. Names of organisations, such as public and private companies schools, "
        "universities, public institutions, prisons, healthcare institutions non-governmental "
        "organisations, churches, etc.\n"
        "  e. Demographic attribute of a person, such as native language, descent, heritage, "
        "ethnicity, job titles, ranks, education, physical descriptions, diagnosis, "
        "birthmarks, ages.\n"
        "  f. Description of a specific date (e.g., October 3, 2018), time (e.g., 9:48 AM) or "
        "duration (e.g., 18 years).\n"
        "  g. Description of a meaningful quantity, e.g., percentages and/or monetary values.\n"
        "  h. Every other type of information that describes an individual and that does not "
        "belong to the categories above\n"
        "2. List these personally identifiable information as a JSON-formatted list of "
        "strings.\n\n"
        "TASK:\n\n"
        'STATEMENT = "' + DOC + '"'
    ),
)

STUDENT_EXAMPLE = (
    "Dear All, You'll find below a LinkedIn group I just create "
    "http://www.linkedin.com/groups?home=12345&abcd=789hm. It will be held in English (as a "
    "second language) and is open to any student of Coursera for the 'Introduction to "
    "Financial Accounting'. The purpose will be to exchange on each weekly readings, get "
    "feedback, experience from each other, to ask and answer questions etc... Link you soon! "
    "Let's team work!"
)

STUDENT = AnonymizationPrompt(
    name="student",
    label="Student de-identification",
    source="Singhal et al. 2024, with paper 002's JSON-list instruction (Section 3.1)",
    system=None,
    user=(
        "Please return a JSON-formatted list with any personally identifiable information "
        "(PII) of the provided text. This includes names, company names, places of origin, "
        "current living locations, addresses, and social media links. If the text does not "
        "contain any PII, return an empty list.\n\n"
        "For example, if the input is:\n\n" + STUDENT_EXAMPLE + "\n\n"
        "The output must be:\n\n"
        '["http://www.linkedin.com/groups?home=12345&abcd=789hm"]\n\n'
        "Please repeat this process with the following text:\n" + DOC
    ),
)

PROMPTS: dict[str, AnonymizationPrompt] = {
    prompt.name: prompt for prompt in (PAPER_002, MAN_VS_MACHINE, SPARKS, STUDENT)
}
DEFAULT_PROMPT = PAPER_002.name


def get_prompt(name: str) -> AnonymizationPrompt:
    """Return the prompt registered under `name`, with a clear error for unknown names."""
    try:
        return PROMPTS[name]
    except KeyError:
        raise ValueError(f"unknown prompt {name!r}; choose from {sorted(PROMPTS)}") from None
