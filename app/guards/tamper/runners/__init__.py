"""How a suite is collected and run: pytest's configuration and collection, the JavaScript
runners' settings (Jest, Vitest, Mocha, AVA), and the commands that run them."""
