/** Units the console shows, derived once on the server. */

/** Resident memory in MiB (what `rss_mb` means), one decimal. */
export const rssMb = (bytes: number): number => Math.round((bytes / 1_048_576) * 10) / 10;
