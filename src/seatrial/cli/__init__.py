def main() -> None:
    """Entry point."""
