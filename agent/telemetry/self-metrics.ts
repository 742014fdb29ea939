import type { LogRing } from '../logs/ring.js';

/** The snapshot's `self_metrics` without the optional timing fields. */
export interface SelfMetrics {
  cpu: number;
  rss: number;
  total_failures: number;
  log_warning_count: number;
  log_error_count: number;
  last_error_at: string | null;
  last_error_message: string | null;
}

/**
 * CPU use of this process in percent of one core, averaged over the time since
 * the previous reading (the first reading covers the time since the meter was
 * made). A meter per snapshot loop, so two callers do not halve each other's window.
 */
export class CpuMeter {
  private last = { usage: process.cpuUsage(), at: process.hrtime.bigint() };

  read(): number {
    const usage = process.cpuUsage();
    const at = process.hrtime.bigint();
    const cpuMicros = usage.user - this.last.usage.user + (usage.system - this.last.usage.system);
    const wallMicros = Number(at - this.last.at) / 1000;
    this.last = { usage, at };
    return wallMicros > 0 ? Math.max(0, Math.round((cpuMicros / wallMicros) * 10_000) / 100) : 0;
  }
}

/** Self-metrics: CPU, resident memory, failed applies since start, and the ring's last hour of warnings and errors. */
export function selfMetrics(cpu: CpuMeter, ring: LogRing, failures: number, now = Date.now()): SelfMetrics {
  const stats = ring.lastHour(now);
  return {
    cpu: cpu.read(),
    rss: process.memoryUsage.rss(),
    total_failures: failures,
    log_warning_count: stats.warnings,
    log_error_count: stats.errors,
    last_error_at: stats.last_error_at,
    last_error_message: stats.last_error_message === null ? null : stats.last_error_message.slice(0, 2000),
  };
}
