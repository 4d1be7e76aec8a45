"""Whether a skip can apply where the suite runs (Linux, x86_64, a Python the project
declares, its test requirements installed): skip conditions, the platform flags and marker
names they use, the project files that declare the Pythons and the test requirements."""
