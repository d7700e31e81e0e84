import type IpAddr from "ipaddr.js";

type Address = IpAddr.IPv4 | IpAddr.IPv6;

/** Which callback hosts and addresses a delivery may reach (SEP-3415, SSRF prevention). */
export interface AddressPolicy {
  /** True when the operator's allow-list names this host (or, for a literal, its range). */
  allowsHost(hostname: string): boolean;
  /** True when a connection may go to this address: globally routable, or allowed. */
  allowsAddress(address: string): boolean;
}

let loading: Promise<typeof IpAddr> | undefined;

/** ipaddr.js, an optional peer: loaded only when webhooks are on. */
function loadIpaddr(): Promise<typeof IpAddr> {
  loading ??= import("ipaddr.js").then(
    (module) => ((module as { default?: typeof IpAddr }).default ?? module) as typeof IpAddr,
    (error: unknown) => {
      loading = undefined;
      throw new Error("Webhooks need the optional peer dependency ipaddr.js", { cause: error });
    },
  );
  return loading;
}

/** A URL's hostname as written in a URL, without the brackets of an IPv6 literal. */
export function bareHost(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

/**
 * The policy for an allow-list of hostnames and CIDRs (or single addresses). Every address not
 * allowed must be `unicast` by the IANA special-purpose registries as ipaddr.js knows them, after
 * an IPv4-mapped IPv6 address is unwrapped: private, loopback, link-local (169.254.169.254, the
 * cloud metadata address, included), unique-local, carrier-grade NAT, multicast, reserved,
 * unspecified, NAT64 and 6to4 are refused, and so is the deprecated IPv4-compatible `::/96`
 * (`::7f00:1` is 127.0.0.1 to a stack that still routes it), which ipaddr.js calls unicast.
 */
export async function createAddressPolicy(allow: readonly string[]): Promise<AddressPolicy> {
  const ipaddr = await loadIpaddr();
  const ranges: [Address, number][] = [];
  const hosts = new Set<string>();
  for (const entry of allow) {
    const item = bareHost(entry.trim().toLowerCase());
    if (ipaddr.isValidCIDR(item)) ranges.push(unwrapRange(ipaddr.parseCIDR(item)));
    else if (ipaddr.isValid(item)) {
      const address = unwrap(ipaddr.parse(item));
      ranges.push([address, address.kind() === "ipv4" ? 32 : 128]);
    } else if (/^[a-z0-9.-]+$/.test(item)) hosts.add(item.replace(/\.$/, ""));
    else throw new Error(`events.webhooks.allow: not a hostname or CIDR: ${entry}`);
  }
  const inAllowedRange = (address: Address) =>
    ranges.some(([base, bits]) => base.kind() === address.kind() && address.match(base, bits));
  const parse = (text: string): Address | undefined =>
    ipaddr.isValid(text) ? unwrap(ipaddr.parse(text)) : undefined;
  return {
    allowsHost(hostname) {
      const host = bareHost(hostname.toLowerCase()).replace(/\.$/, "");
      if (hosts.has(host)) return true;
      const literal = parse(host);
      return literal !== undefined && inAllowedRange(literal);
    },
    allowsAddress(text) {
      const address = parse(text);
      if (!address) return false;
      if (inAllowedRange(address)) return true;
      return address.range() === "unicast" && !isIPv4Compatible(address);
    },
  };
}

/** True for an IPv6 address in `::/96` (RFC 4291, section 2.5.5.1: deprecated, never routed). */
function isIPv4Compatible(address: Address): boolean {
  if (address.kind() !== "ipv6") return false;
  return (address as IpAddr.IPv6).parts.slice(0, 6).every((part) => part === 0);
}

/** An IPv4-mapped IPv6 address (`::ffff:10.0.0.1`) as the IPv4 address it carries. */
function unwrap(address: Address): Address {
  return address.kind() === "ipv6" && (address as IpAddr.IPv6).isIPv4MappedAddress()
    ? (address as IpAddr.IPv6).toIPv4Address()
    : address;
}

function unwrapRange([base, bits]: [Address, number]): [Address, number] {
  const address = unwrap(base);
  return address === base ? [base, bits] : [address, Math.max(0, bits - 96)];
}
