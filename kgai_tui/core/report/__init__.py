"""The store as a report for a newcomer: the model and its Markdown and HTML forms."""
