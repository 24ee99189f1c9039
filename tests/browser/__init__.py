"""The app in a real browser (Debian's chromium, driven by Playwright): the journey, and
what only a browser shows."""
