#!/usr/bin/env python3
"""Check a Warden evidence bundle without Warden.

Needs only the Python 3 standard library, plus openssl(1) 3.x for the Ed25519 signature.

    python3 verify_bundle.py bundle.json [--key 'name+keyid+base64'] [--previous older.json] [--no-signature]

Pass --key with the signing key you obtained from somewhere other than the bundle; without it the
key inside the bundle is used (which proves integrity, not who made it). --previous checks that this
log extends the one an earlier bundle showed (a consistency proof), i.e. nothing was rewritten since. Prints "OK ..." and exits 0
when every entry hash, chain link, inclusion proof and the checkpoint signature hold; prints the
first problem and exits 1 otherwise.

What it checks (the same rules as `warden audit verify --report`):
  entry.hash = SHA-256(0x00 || UTF-8(RFC 8785 JCS of {actor, kind, payload, prev_hash, sandbox_id,
               seq, time})), entry 1 linking to 64 zeros;
  consecutive entries link (prev_hash = previous hash); the last entry of each run of consecutive
  entries has an RFC 6962 inclusion proof to the checkpoint's root;
  the checkpoint is a C2SP signed note by the key.
"""
import base64
import hashlib
import json
import math
import os
import subprocess
import sys
import tempfile

GENESIS = "0" * 64


def es_number(x):
    """ECMAScript Number::toString, which RFC 8785 prescribes for numbers."""
    f = float(x)
    if math.isnan(f) or math.isinf(f):
        raise ValueError("a number JSON cannot hold")
    if f == 0:
        return "0"
    sign = "-" if f < 0 else ""
    mant, _, exp = repr(abs(f)).partition("e")  # repr: the shortest digits that round-trip
    whole, _, frac = mant.partition(".")
    digits = whole + frac
    n = len(whole) + int(exp or 0)  # value = 0.DIGITS x 10^n
    stripped = digits.lstrip("0")
    n -= len(digits) - len(stripped)
    s = stripped.rstrip("0") or "0"
    k = len(s)
    if k <= n <= 21:
        out = s + "0" * (n - k)
    elif 0 < n <= 21:
        out = s[:n] + "." + s[n:]
    elif -6 < n <= 0:
        out = "0." + "0" * -n + s
    else:
        e = n - 1
        out = s[0] + ("." + s[1:] if k > 1 else "") + "e" + ("+" if e >= 0 else "-") + str(abs(e))
    return sign + out


def jcs(v):
    """RFC 8785 JSON Canonicalization Scheme."""
    if v is None:
        return "null"
    if v is True:
        return "true"
    if v is False:
        return "false"
    if isinstance(v, (int, float)):
        return es_number(v)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)  # escapes exactly what RFC 8785 escapes
    if isinstance(v, list):
        return "[" + ",".join(jcs(x) for x in v) + "]"
    if isinstance(v, dict):
        keys = sorted(v, key=lambda k: k.encode("utf-16-be"))  # UTF-16 code unit order
        return "{" + ",".join(json.dumps(k, ensure_ascii=False) + ":" + jcs(v[k]) for k in keys) + "}"
    raise ValueError("not JSON: %r" % (v,))


def entry_hash(e):
    obj = {"actor": e["actor"], "kind": e["kind"], "payload": e["payload"], "prev_hash": e["prevHash"],
           "sandbox_id": e["sandboxId"], "seq": e["seq"], "time": e["time"]}
    return hashlib.sha256(b"\x00" + jcs(obj).encode("utf-8")).hexdigest()


def node(left, right):
    return hashlib.sha256(b"\x01" + left + right).digest()


def verify_inclusion(leaf, index, size, path, root):
    """RFC 9162 section 2.1.3.2."""
    if index >= size or any(len(p) != 32 for p in path):
        return False
    fn, sn, r = index, size - 1, leaf
    for p in path:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            r = node(p, r)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            r = node(r, p)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and r == root


def verify_consistency(size1, size2, root1, root2, path):
    """RFC 9162 section 2.1.4.2: the tree of size1 is a prefix of the tree of size2."""
    if size1 > size2 or any(len(p) != 32 for p in path):
        return False
    if size1 == size2:
        return not path and root1 == root2
    if size1 == 0:
        return not path
    if not path:
        return False
    if size1 & (size1 - 1) == 0:
        path = [root1] + path
    fn, sn = size1 - 1, size2 - 1
    while fn % 2 == 1:
        fn, sn = fn >> 1, sn >> 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn % 2 == 1 or fn == sn:
            fr, sr = node(c, fr), node(c, sr)
            while fn % 2 == 0 and fn != 0:
                fn, sn = fn >> 1, sn >> 1
        else:
            sr = node(sr, c)
        fn, sn = fn >> 1, sn >> 1
    return sn == 0 and fr == root1 and sr == root2


def parse_vkey(vkey):
    name, key_id, material = vkey.split("+", 2)
    raw = base64.b64decode(material, validate=True)
    if len(raw) != 33 or raw[0] != 1:
        raise ValueError("not an Ed25519 verifier key")
    if hashlib.sha256(name.encode() + b"\n" + raw).digest()[:4].hex() != key_id:
        raise ValueError("key id does not match the key")
    return name, bytes.fromhex(key_id), raw[1:]


def open_note(note, vkey, check_signature=True):
    """Returns (origin, size, root) of a C2SP checkpoint note signed by vkey."""
    name, key_id, raw = parse_vkey(vkey)
    split = note.rindex("\n\n")
    text, sigs = note[: split + 1], note[split + 2:]
    sig = None
    for line in sigs.splitlines():
        if not line.startswith("\u2014 "):
            raise ValueError("bad signature line")
        who, blob = line[2:].split(" ", 1)
        blob = base64.b64decode(blob, validate=True)
        if who == name and blob[:4] == key_id:
            sig = blob[4:]
    if sig is None:
        raise ValueError("the checkpoint is not signed by %s" % vkey)
    if check_signature and not openssl_verify(text.encode("utf-8"), sig, raw):
        raise ValueError("bad signature")
    origin, size, root = text.split("\n")[:3]
    return origin, int(size), base64.b64decode(root, validate=True)


def openssl_verify(message, sig, raw_key):
    der = bytes.fromhex("302a300506032b6570032100") + raw_key
    pem = "-----BEGIN PUBLIC KEY-----\n" + base64.b64encode(der).decode() + "\n-----END PUBLIC KEY-----\n"
    with tempfile.TemporaryDirectory() as d:
        paths = {}
        for name, data in (("key.pem", pem.encode()), ("msg", message), ("sig", sig)):
            paths[name] = os.path.join(d, name)
            with open(paths[name], "wb") as f:
                f.write(data)
        run = subprocess.run(["openssl", "pkeyutl", "-verify", "-pubin", "-inkey", paths["key.pem"], "-rawin",
                              "-in", paths["msg"], "-sigfile", paths["sig"]], capture_output=True)
        return run.returncode == 0


def check(bundle, vkey, check_signature):
    """Returns None when the bundle checks out, else (seq, reason)."""
    origin, size, root = open_note(bundle["checkpoint"]["note"], vkey, check_signature)
    if origin != bundle["origin"] or size != bundle["checkpoint"]["size"] or root.hex() != bundle["checkpoint"]["root"]:
        return (1, "checkpoint mismatch")
    proofs = {p["seq"]: p for p in bundle["proofs"]}
    entries = bundle["entries"]
    sel = bundle["selection"]
    for i, e in enumerate(entries):
        prev = entries[i - 1] if i else None
        if prev and e["seq"] <= prev["seq"]:
            return (e["seq"], "reordered")
        if sel["sandboxId"] is None and e["seq"] != (prev["seq"] + 1 if prev else sel["fromSeq"]):
            return (prev["seq"] + 1 if prev else sel["fromSeq"], "gap")
        if entry_hash(e) != e["hash"]:
            return (e["seq"], "hash mismatch")
        in_run = prev is not None and prev["seq"] + 1 == e["seq"]
        if (in_run and e["prevHash"] != prev["hash"]) or (e["seq"] == 1 and e["prevHash"] != GENESIS):
            return (e["seq"], "broken link")
        nxt = entries[i + 1] if i + 1 < len(entries) else None
        if not nxt or nxt["seq"] != e["seq"] + 1:
            p = proofs.get(e["seq"])
            path = [bytes.fromhex(h) for h in p["path"]] if p else []
            if not p or p["treeSize"] != size or not verify_inclusion(bytes.fromhex(e["hash"]), e["seq"] - 1, size, path, root):
                return (e["seq"], "checkpoint mismatch")
    return None


def check_previous(bundle, older, vkey, check_signature):
    """The log in `bundle` extends the log an older bundle showed (same key): None, or (seq, reason)."""
    origin, size, root = open_note(bundle["checkpoint"]["note"], vkey, check_signature)
    old_origin, old_size, old_root = open_note(older["checkpoint"]["note"], vkey, check_signature)
    if old_origin != origin:
        return (1, "checkpoint mismatch")
    if old_size > size:
        return (size + 1, "checkpoint mismatch")
    if old_size == size:
        return None if old_root == root else (1, "checkpoint mismatch")
    for c in bundle["consistency"]:
        path = [bytes.fromhex(h) for h in c["path"]]
        if c["fromSize"] == old_size and c["toSize"] == size and verify_consistency(old_size, size, old_root, root, path):
            return None
    return (1, "checkpoint mismatch")


def option(argv, name):
    if name in argv and argv.index(name) + 1 < len(argv):
        return argv[argv.index(name) + 1]
    return None


def main(argv):
    vkey = option(argv, "--key")
    previous = option(argv, "--previous")
    args = [a for a in argv if not a.startswith("--") and a not in (vkey, previous)]
    if len(args) != 1:
        print(__doc__.strip().split("\n\n")[1])
        return 2
    with open(args[0], encoding="utf-8") as f:
        bundle = json.load(f)
    if vkey is None:
        vkey = bundle["publicKey"]["vkey"]
        print("note: using the key inside the bundle; pass --key with a key you trust to prove who signed it", file=sys.stderr)
    try:
        bad = check(bundle, vkey, "--no-signature" not in argv)
        if not bad and previous:
            with open(previous, encoding="utf-8") as f:
                bad = check_previous(bundle, json.load(f), vkey, "--no-signature" not in argv)
    except (ValueError, KeyError, TypeError) as err:
        print("FAIL: checkpoint: %s" % err)
        return 1
    if bad:
        print("FAIL: entry %d: %s" % bad)
        return 1
    cp = bundle["checkpoint"]
    print("OK: %d entries check out against checkpoint %s of %d entries (root %s), signed by %s"
          % (len(bundle["entries"]), bundle["origin"], cp["size"], cp["root"], vkey))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
