"""Issue 50: one word per thing and one range mechanism. The guard run's rank is `rank` (it
was `k`, the word the risk report used for its folds); the study's and the guard run's
numeric settings take their validators from `intruder.bounds` (same ranges, the one message
of each)."""

import django.core.validators
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("intruder", "0029_issue48_49_familiarity_guard_undo_rehearsal"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="guardrun",
            name="guard_run_k_at_least_2",
        ),
        migrations.RenameField(
            model_name="guardrun",
            old_name="k",
            new_name="rank",
        ),
        migrations.AlterField(
            model_name="guardrun",
            name="budget",
            field=models.FloatField(
                help_text="Most words the guard may mask, as a share of a text's.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0.01, message="the masking budget must lie between 0.01 and 1.0"
                    ),
                    django.core.validators.MaxValueValidator(
                        1.0, message="the masking budget must lie between 0.01 and 1.0"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="guardrun",
            name="rank",
            field=models.PositiveIntegerField(
                help_text="Mask until every attack ranks the person at this rank or worse.",
                validators=[
                    django.core.validators.MinValueValidator(
                        2, message="the rank must lie between 2 and 1000"
                    ),
                    django.core.validators.MaxValueValidator(
                        1000, message="the rank must lie between 2 and 1000"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="attention_checks",
            field=models.PositiveSmallIntegerField(
                default=0,
                help_text="Intruder tests: instructed-response items placed among each intruder's texts (0 = none); scored apart, never counted as texts.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0, message="attention checks per intruder must lie between 0 and 5"
                    ),
                    django.core.validators.MaxValueValidator(
                        5, message="attention checks per intruder must lie between 0 and 5"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="identification_threshold",
            field=models.FloatField(
                default=0.75,
                help_text="Character cosine at or above which a guess counts as identified.",
                validators=[
                    django.core.validators.MinValueValidator(
                        0.0, message="the identification threshold must lie between 0.0 and 1.0"
                    ),
                    django.core.validators.MaxValueValidator(
                        1.0, message="the identification threshold must lie between 0.0 and 1.0"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="items_per_participant",
            field=models.PositiveSmallIntegerField(
                default=10,
                validators=[
                    django.core.validators.MinValueValidator(
                        1, message="texts per participant must lie between 1 and 200"
                    ),
                    django.core.validators.MaxValueValidator(
                        200, message="texts per participant must lie between 1 and 200"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="judgments_per_text",
            field=models.PositiveSmallIntegerField(
                default=3,
                validators=[
                    django.core.validators.MinValueValidator(
                        1, message="judgments per text must lie between 1 and 100"
                    ),
                    django.core.validators.MaxValueValidator(
                        100, message="judgments per text must lie between 1 and 100"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="min_description_chars",
            field=models.PositiveIntegerField(
                default=500,
                validators=[
                    django.core.validators.MinValueValidator(
                        0, message="the shortest description must lie between 0 and 20000"
                    ),
                    django.core.validators.MaxValueValidator(
                        20000, message="the shortest description must lie between 0 and 20000"
                    ),
                ],
            ),
        ),
        migrations.AlterField(
            model_name="study",
            name="time_limit_minutes",
            field=models.PositiveIntegerField(
                default=60,
                help_text="Unfinished assignments are released after this many minutes.",
                validators=[
                    django.core.validators.MinValueValidator(
                        1, message="the time limit in minutes must lie between 1 and 1440"
                    ),
                    django.core.validators.MaxValueValidator(
                        1440, message="the time limit in minutes must lie between 1 and 1440"
                    ),
                ],
            ),
        ),
        migrations.AddConstraint(
            model_name="guardrun",
            constraint=models.CheckConstraint(
                condition=models.Q(("rank__gte", 2)), name="guard_run_rank_at_least_2"
            ),
        ),
    ]
