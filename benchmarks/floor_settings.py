"""Settings of `server_floor.py`: the production settings with the floor URLs added."""

from intruder.settings import *  # noqa: F403 - the same stack, one setting changed

ROOT_URLCONF = "floor_urls"
