"""Issue 36: each serving of an intruder's text, with its token and its reported telemetry."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("intruder", "0020_issue35_human_threat_model"),
    ]

    operations = [
        migrations.CreateModel(
            name="PageView",
            fields=[
                (
                    "id",
                    models.BigAutoField(
                        auto_created=True, primary_key=True, serialize=False, verbose_name="ID"
                    ),
                ),
                ("token", models.CharField(max_length=64, unique=True)),
                ("served_at", models.DateTimeField()),
                ("reported_at", models.DateTimeField(blank=True, null=True)),
                (
                    "telemetry",
                    models.JSONField(
                        blank=True,
                        help_text="The view's checked telemetry; empty until reported.",
                        null=True,
                    ),
                ),
                (
                    "problems",
                    models.JSONField(
                        blank=True,
                        default=list,
                        help_text="What did not fit in its report (in words).",
                    ),
                ),
                (
                    "assignment",
                    models.ForeignKey(
                        on_delete=django.db.models.deletion.CASCADE,
                        related_name="page_views",
                        to="intruder.assignment",
                    ),
                ),
            ],
            options={
                "ordering": ["assignment", "served_at", "id"],
            },
        ),
    ]
