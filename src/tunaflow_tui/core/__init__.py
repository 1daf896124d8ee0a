"""Domain core: markers, workflow, storage, plan documents. Never imports textual or rich."""
