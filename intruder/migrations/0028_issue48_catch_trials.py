# Issue 48: catch trials, texts about a made-up person nobody can know (TargetPerson.catch).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("intruder", "0027_issue47_prolific_claims"),
    ]

    operations = [
        migrations.AddField(
            model_name="targetperson",
            name="catch",
            field=models.BooleanField(
                default=False,
                help_text="A catch trial: a made-up person nobody can know; its texts are "
                "served but never counted in the rates, and naming it is flagged.",
            ),
        ),
    ]
