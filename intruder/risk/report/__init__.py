"""The human-vs-machine risk report: its tables (`tables`), its words (`summary`) and the
function that puts them together from a run's frames (`build`)."""
