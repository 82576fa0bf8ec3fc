"""aquas."""
