"""The LLM anonymizer's and the open-world LLM intruder's Django side (issue 38): the jobs
that send a study's texts to the configured endpoint through the `llm` library (`services`),
their scored guesses (`models`), the study page's results (`selectors`), the researcher's
actions (`views`, `urls`), the REST endpoints (`apis`, `api_urls`), and the guesses scored
again with the judgments (`scoring`, registered with `intruder.services.scoring`)."""
