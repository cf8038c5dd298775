"""Issue 50: one word per thing. The guard run's rank is `rank` (it was `k`, the word the
risk report used for its folds)."""

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
            name="rank",
            field=models.PositiveIntegerField(
                help_text="Mask until every attack ranks the person at this rank or worse."
            ),
        ),
        migrations.AddConstraint(
            model_name="guardrun",
            constraint=models.CheckConstraint(
                condition=models.Q(("rank__gte", 2)), name="guard_run_rank_at_least_2"
            ),
        ),
    ]
