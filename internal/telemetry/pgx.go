package telemetry

import (
	"github.com/exaring/otelpgx"
	"github.com/jackc/pgx/v5/pgxpool"
)

// InstrumentPool makes every statement of a pool built from cfg a span
// (otelpgx), unless cfg already has a tracer of its own.
func (t *Telemetry) InstrumentPool(cfg *pgxpool.Config) {
	if cfg.ConnConfig.Tracer != nil {
		return
	}
	cfg.ConnConfig.Tracer = otelpgx.NewTracer(otelpgx.WithTracerProvider(t.TracerProvider),
		otelpgx.WithMeterProvider(t.MeterProvider), otelpgx.WithTrimSQLInSpanName())
}
