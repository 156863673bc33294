"""GPU building blocks without particles: scan, binning, compaction, sort schedules."""
