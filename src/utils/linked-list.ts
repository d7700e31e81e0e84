/** An entry of a {@link LinkedList}, removed through the list that made it. */
export class Link<T> {
  prev: Link<T> | undefined = undefined;
  next: Link<T> | undefined = undefined;
  linked = true;

  constructor(
    readonly list: LinkedList<T>,
    readonly value: T,
  ) {}
}

/**
 * A list that entries join and leave in any order, in constant time: for what every request
 * joins and leaves (the requests in flight, those unanswered on a connection), where a Set's
 * hash table is rebuilt over and over as entries come and go. Oldest first, as a Set iterates.
 */
export class LinkedList<T> {
  #first: Link<T> | undefined;
  #last: Link<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value` at the end; the link it returns removes it. */
  add(value: T): Link<T> {
    const link = new Link(this, value);
    link.prev = this.#last;
    if (this.#last) this.#last.next = link;
    else this.#first = link;
    this.#last = link;
    this.#size++;
    return link;
  }

  /** The oldest link, to walk the list in place (read a link's `next` before removing it). */
  get first(): Link<T> | undefined {
    return this.#first;
  }

  /**
   * Moves `link` to the end, as if removed and added again, with no new link: for an order of
   * use that every request changes (see memory-sessions.ts). Throws for another list's link.
   */
  moveToEnd(link: Link<T>): void {
    if (link.list !== this) throw new TypeError("the link belongs to another list");
    if (!link.linked || link === this.#last) return;
    if (link.prev) link.prev.next = link.next;
    else this.#first = link.next;
    link.next!.prev = link.prev;
    link.prev = this.#last;
    link.next = undefined;
    this.#last!.next = link;
    this.#last = link;
  }

  /** Removes `link`; false if it was removed already. Throws for another list's link. */
  remove(link: Link<T>): boolean {
    if (link.list !== this) throw new TypeError("the link belongs to another list");
    if (!link.linked) return false;
    link.linked = false;
    if (link.prev) link.prev.next = link.next;
    else this.#first = link.next;
    if (link.next) link.next.prev = link.prev;
    else this.#last = link.prev;
    link.prev = link.next = undefined;
    this.#size--;
    return true;
  }

  /** The values now in the list, oldest first: a copy, safe to change the list while reading. */
  values(): T[] {
    const values: T[] = [];
    for (let link = this.#first; link; link = link.next) values.push(link.value);
    return values;
  }
}
