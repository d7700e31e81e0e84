/** An entry of a {@link LinkedList}. */
export class Link<T> {
  prev: Link<T> | undefined = undefined;
  next: Link<T> | undefined = undefined;
  linked = true;

  constructor(readonly value: T) {}
}

/**
 * A list that entries join and leave in any order, in constant time: for what every request
 * joins and leaves (the requests in flight, those unanswered on a connection), where a Set's
 * hash table is rebuilt over and over as entries come and go.
 */
export class LinkedList<T> {
  #first: Link<T> | undefined;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  /** Adds `value`; the link it returns removes it. */
  add(value: T): Link<T> {
    const link = new Link(value);
    link.next = this.#first;
    if (this.#first) this.#first.prev = link;
    this.#first = link;
    this.#size++;
    return link;
  }

  /** Removes `link`; false if it was removed already. */
  remove(link: Link<T>): boolean {
    if (!link.linked) return false;
    link.linked = false;
    if (link.prev) link.prev.next = link.next;
    else this.#first = link.next;
    if (link.next) link.next.prev = link.prev;
    link.prev = link.next = undefined;
    this.#size--;
    return true;
  }

  /** The values now in the list, newest first: a copy, safe to change the list while reading. */
  values(): T[] {
    const values: T[] = [];
    for (let link = this.#first; link; link = link.next) values.push(link.value);
    return values;
  }
}
