"""What each job does, with I/O: the `ourobot/guards` check run (`guards_check`), the
`ourobot/review` check run (`review_check`, with `review_inputs`, `review_publish`,
`review_github`) and the replies to slash commands (`command_replies`); the job registry
(`registry`) and what every job runs with (`context`). Jobs take plain values, authenticate
inside and are idempotent. Every module here is imported by `load_job_modules`."""
