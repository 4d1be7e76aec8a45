"""What is not tampering, one module per exemption: removed tests set aside
(`set_aside.Exemptions`, over the evidence of `evidence`), tests that ran nowhere
(`dropped_pythons`, `vacuous`), skips that only moved or were reworded (`moved_skips`,
`case_skips`), and a suite moved to TypeScript whole (`retyped`)."""
