/**
 * IP address reading in plain JavaScript (the core runs where `node:net` does not): enough to
 * tell loopback apart and to key callers by address, not a general address library.
 */

/** Eight 16-bit groups of an IPv6 address, or undefined for text that is none. */
function ipv6Groups(text: string): number[] | undefined {
  let address = text.startsWith("[") && text.endsWith("]") ? text.slice(1, -1) : text;
  const zone = address.indexOf("%");
  if (zone !== -1) address = address.slice(0, zone);
  const halves = address.split("::");
  if (halves.length > 2) return undefined;
  const head = groupsOf(halves[0]!, halves.length === 1);
  const tail = halves.length === 2 ? groupsOf(halves[1]!, true) : [];
  if (!head || !tail) return undefined;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 1) return undefined;
  return [...head, ...new Array<number>(halves.length === 2 ? missing : 0).fill(0), ...tail];
}

/** The groups of one side of `::`; the last may be a dotted IPv4 address (two groups). */
function groupsOf(part: string, last: boolean): number[] | undefined {
  if (part === "") return [];
  const groups: number[] = [];
  const pieces = part.split(":");
  for (const [index, piece] of pieces.entries()) {
    if (last && index === pieces.length - 1 && piece.includes(".")) {
      const octets = ipv4Octets(piece);
      if (!octets) return undefined;
      groups.push((octets[0]! << 8) | octets[1]!, (octets[2]! << 8) | octets[3]!);
    } else if (/^[0-9a-f]{1,4}$/i.test(piece)) {
      groups.push(Number.parseInt(piece, 16));
    } else {
      return undefined;
    }
  }
  return groups;
}

/** The four octets of a dotted-decimal IPv4 address, or undefined. */
function ipv4Octets(text: string): number[] | undefined {
  const parts = text.split(".");
  if (parts.length !== 4) return undefined;
  const octets = parts.map((part) => (/^\d{1,3}$/.test(part) ? Number(part) : 256));
  return octets.every((octet) => octet < 256) ? octets : undefined;
}

/** The IPv4 address an IPv4-mapped IPv6 address (`::ffff:0:0/96`, RFC 4291 §2.5.5.2) carries. */
function mappedIpv4(groups: readonly number[]): string | undefined {
  if (!groups.slice(0, 5).every((group) => group === 0) || groups[5] !== 0xffff) return undefined;
  const [high, low] = [groups[6]!, groups[7]!];
  return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
}

/**
 * True for an address on this machine's loopback: 127.0.0.0/8, `::1`, and 127.0.0.0/8 mapped into
 * IPv6 (`::ffff:127.0.0.2`: what a dual-stack socket, Node's `listen(port)` default, reports).
 */
export function isLoopbackAddress(address: string): boolean {
  const octets = ipv4Octets(address);
  if (octets) return octets[0] === 127;
  const groups = ipv6Groups(address);
  if (!groups) return false;
  const mapped = mappedIpv4(groups);
  if (mapped !== undefined) return mapped.startsWith("127.");
  return groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1;
}

/**
 * The key an anonymous caller's address is counted under: an IPv4 address as it is (an
 * IPv4-mapped one as its IPv4 address); an IPv6 address cut to its first `prefix` bits, since
 * one subscriber usually holds a whole /64. Text that is no address is kept as it is.
 */
export function addressKey(address: string, prefix: number): string {
  if (ipv4Octets(address)) return address;
  const groups = ipv6Groups(address);
  if (!groups) return address;
  const mapped = mappedIpv4(groups);
  if (mapped !== undefined) return mapped;
  const kept = groups.map((group, index) => {
    const bits = Math.min(16, Math.max(0, prefix - index * 16));
    return bits === 16 ? group : group & ~(0xffff >> bits) & 0xffff;
  });
  return `${kept.map((group) => group.toString(16)).join(":")}/${prefix}`;
}

/** How many addresses a keyer remembers before it starts over. */
const REMEMBERED_ADDRESSES = 4096;

/**
 * `addressKey` for one prefix, after `label`, remembering the keys of recent addresses: a caller's
 * address is read on every request it makes, and a keep-alive client makes many from the same one.
 */
export function addressKeyer(prefix: number, label = ""): (address: string) => string {
  const keys = new Map<string, string>();
  return (address) => {
    let key = keys.get(address);
    if (key === undefined) {
      if (keys.size >= REMEMBERED_ADDRESSES) keys.clear();
      key = label + addressKey(address, prefix);
      keys.set(address, key);
    }
    return key;
  };
}

/** Checks an IPv6 prefix length once, when the endpoint is created. */
export function checkIpv6Subnet(prefix: number): number {
  if (!Number.isInteger(prefix) || prefix < 1 || prefix > 128)
    throw new TypeError(`ipv6Subnet must be a prefix length from 1 to 128, not ${prefix}`);
  return prefix;
}
