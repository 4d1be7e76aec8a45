"""Installing ourobot: the GitHub App's manifest and the deployment checks (`ourobot doctor`)."""
