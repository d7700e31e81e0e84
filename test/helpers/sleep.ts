/**
 * Lets real time pass on purpose: for a timer under test to expire (an idle timeout, a TTL, a
 * cooldown), or to give something the time to happen that must not. To wait until something
 * happens, use `expect.poll` or await the event instead.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
