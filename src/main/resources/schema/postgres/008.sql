-- Flush sources that recover, and voided flush ids (src/DESIGN.md §4, write/FlushSources).
-- closed_at: when the prune closed a silent source. A closed source keeps its flush ids, so the gateway it belonged
-- to (cut off, paused, not dead) can resolve its unsettled flushes by them, and goes with them a further retention
-- after closed_at. voided: the id of a flush the database refused a value of, inserted before the flush is split or
-- refused, so that a late copy of an earlier attempt finds it and writes nothing. Both columns are nullable or have a constant default: nothing is rewritten.
ALTER TABLE ${table}_flush_sources ADD COLUMN IF NOT EXISTS closed_at TIMESTAMPTZ;
ALTER TABLE ${table}_flushes ADD COLUMN IF NOT EXISTS voided BOOLEAN NOT NULL DEFAULT false
