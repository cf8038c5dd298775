"""The real anonymizer and the tests' fake both satisfy `anonymize.TextAnonymizer`."""

from anonymize import Anonymizer, TextAnonymizer
from tests.intruder.fake_anonymizer import FakeAnonymizer


def test_real_and_fake_anonymizer_share_the_protocol(tiny_model_dir):
    """The Django side types its anonymizer as `TextAnonymizer`; the fake must keep up."""
    real = Anonymizer.load(tiny_model_dir)
    fake = FakeAnonymizer()
    for anonymizer in (real, fake):
        assert isinstance(anonymizer, TextAnonymizer)
        results = anonymizer.anonymize_many(["He met Ottilie there."], threshold=0.3)
        assert len(results) == 1 and isinstance(results[0].text, str)
        assert isinstance(anonymizer.model_version, str) and 0 <= anonymizer.threshold <= 1
    assert fake.anonymize("He met Ottilie there.").text == "He met PERSON_FIRSTNAME_1 there."
