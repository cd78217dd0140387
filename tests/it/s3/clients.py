"""boto3 against the S3 door, one case per run (tests/it/s3/boto3.rs and
errors.rs run them): `python3 clients.py CASE BUCKET [ARG]`.

The endpoint and the credential come from S3_ENDPOINT, AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY. A case prints what it saw and exits 1 with the
expectation that failed; 0 when every expectation held.
"""

import base64
import hashlib
import json
import os
import sys
import urllib.error
import urllib.request
import uuid

import boto3
import botocore.config
import botocore.exceptions

ENDPOINT = os.environ["S3_ENDPOINT"]


def client(access_key=None, secret=None, signature_version=None):
    return boto3.client(
        "s3",
        endpoint_url=ENDPOINT,
        region_name="us-east-1",
        aws_access_key_id=access_key or os.environ["AWS_ACCESS_KEY_ID"],
        aws_secret_access_key=secret or os.environ["AWS_SECRET_ACCESS_KEY"],
        config=botocore.config.Config(
            signature_version=signature_version,
            s3={"addressing_style": "path"},
            retries={"max_attempts": 1, "mode": "standard"},
        ),
    )


def expect(cond, what, seen=None):
    if not cond:
        print(f"FAILED: {what}" + (f"; seen: {seen!r}" if seen is not None else ""), file=sys.stderr)
        sys.exit(1)
    print(f"ok: {what}")


def error_of(call):
    """(HTTP status, S3 error code) of a call that must fail."""
    try:
        call()
    except botocore.exceptions.ClientError as e:
        return e.response["ResponseMetadata"]["HTTPStatusCode"], e.response["Error"]["Code"]
    return 200, None


def fetch(req):
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def tampered(url):
    """`url` with the first character of its signature changed (same length)."""
    at = url.index("Signature=") + len("Signature=")
    return url[:at] + ("1" if url[at] == "0" else "0") + url[at + 1 :]


def presign(bucket):
    """Presigned URLs as boto3 signs them with Signature V4 (`s3v4`), then
    with its defaults (botocore 1.43 presigns S3 with Signature V2 unless
    told `s3v4`: what `aws s3 presign` gives too)."""
    for how, s3 in (("s3v4", client(signature_version="s3v4")), ("default", client())):
        body = os.urandom(100_000)
        s3.put_object(Bucket=bucket, Key="pre/get.bin", Body=body)
        url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "pre/get.bin"}, ExpiresIn=300)
        status, got = fetch(url)
        expect(status == 200 and got == body, f"{how}: a presigned GET URL gives the bytes", (status, got[:300], url))
        status, _ = fetch(tampered(url))
        expect(status == 403, f"{how}: a presigned GET URL with a changed signature is 403", status)

        put = os.urandom(70_000)
        url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "pre/put.bin"}, ExpiresIn=300)
        # No Content-Type (urllib's default form type would be one): a V2
        # signature covers it, and the URL was signed without one.
        req = urllib.request.Request(url, data=put, method="PUT", headers={"Content-Type": ""})
        status, answer = fetch(req)
        expect(status == 200, f"{how}: a presigned PUT URL stores the body", (status, answer[:300]))
        got = s3.get_object(Bucket=bucket, Key="pre/put.bin")
        expect(got["Body"].read() == put, f"{how}: the presigned PUT's object has its bytes")
        expect(got["ETag"] == '"%s"' % hashlib.md5(put).hexdigest(), f"{how}: its ETag is the quoted MD5", got["ETag"])

        # The URL's holder adds headers it does not sign: a copy from another
        # key, an ACL. S3 refuses them (V4: HeadersNotSigned; V2's signature
        # covers every x-amz-* header); nothing is copied.
        # An Authorization header claiming them signed changes nothing: the
        # URL's signature is the one checked.
        claim = "AWS4-HMAC-SHA256 Credential=k/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-copy-source, Signature=00"
        copy = {"x-amz-copy-source": f"/{bucket}/pre/get.bin"}
        for extra in (copy, {"x-amz-acl": "public-read"}, {**copy, "Authorization": claim}):
            req = urllib.request.Request(url, data=b"", method="PUT", headers={"Content-Type": "", **extra})
            status, answer = fetch(req)
            expect(status == 403, f"{how}: a presigned PUT with {list(extra)} unsigned is 403", (status, answer[:300]))
            if how == "s3v4":
                name = list(extra)[0].encode()
                expect(b"<HeadersNotSigned>" + name + b"</HeadersNotSigned>" in answer, f"{how}: it names {name}", answer[:400])
            got = s3.get_object(Bucket=bucket, Key="pre/put.bin")
            expect(got["Body"].read() == put, f"{how}: the key keeps its bytes after the refused {list(extra)}")


def multipart_form(fields, file_name, file_bytes):
    boundary = uuid.uuid4().hex
    out = b""
    for k, v in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    out += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{file_name}"\r\n'
        "Content-Type: application/octet-stream\r\n\r\n"
    ).encode()
    out += file_bytes + f"\r\n--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


def post_policy(bucket):
    s3 = client()
    body = os.urandom(20_000)
    post = s3.generate_presigned_post(
        bucket,
        "form/${filename}",
        Fields={"success_action_status": "201"},
        Conditions=[
            ["starts-with", "$key", "form/"],
            ["content-length-range", 1, 1_000_000],
            {"success_action_status": "201"},
        ],
        ExpiresIn=300,
    )
    data, ctype = multipart_form(post["fields"], "hello.bin", body)
    req = urllib.request.Request(post["url"], data=data, method="POST", headers={"Content-Type": ctype})
    status, answer = fetch(req)
    expect(status == 201, "a POST policy upload answers 201", (status, answer[:500]))
    got = s3.get_object(Bucket=bucket, Key="form/hello.bin")["Body"].read()
    expect(got == body, "the POST policy upload stored the file at form/${filename}")

    big = os.urandom(1_000_001)
    data, ctype = multipart_form(post["fields"], "big.bin", big)
    req = urllib.request.Request(post["url"], data=data, method="POST", headers={"Content-Type": ctype})
    status, answer = fetch(req)
    expect(status == 400 and b"EntityTooLarge" in answer, "over content-length-range: 400 EntityTooLarge", (status, answer[:300]))


def listing(bucket):
    s3 = client()
    keys = ["l/a.txt", "l/b.txt", "l/c.txt", "l/d/1.txt", "l/d/2.txt", "l/e/1.txt", "l/f.txt"]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=k.encode())
    seen, pages, token = [], 0, None
    while True:
        kw = {"Bucket": bucket, "Prefix": "l/", "MaxKeys": 2}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        pages += 1
        expect(page["KeyCount"] <= 2, "a page holds at most MaxKeys=2", page["KeyCount"])
        seen += [o["Key"] for o in page.get("Contents", [])]
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    expect(seen == sorted(keys), "paging by 2 lists every key once, in order", seen)
    expect(pages == 4, "7 keys by 2 are 4 pages", pages)

    seen, prefixes, token = [], [], None
    while True:
        kw = {"Bucket": bucket, "Prefix": "l/", "Delimiter": "/", "MaxKeys": 2}
        if token:
            kw["ContinuationToken"] = token
        page = s3.list_objects_v2(**kw)
        seen += [o["Key"] for o in page.get("Contents", [])]
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        expect(page["KeyCount"] <= 2, "keys and prefixes together are at most MaxKeys", page["KeyCount"])
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    expect(seen == ["l/a.txt", "l/b.txt", "l/c.txt", "l/f.txt"], "with Delimiter the direct keys", seen)
    expect(prefixes == ["l/d/", "l/e/"], "with Delimiter the subfolders as CommonPrefixes", prefixes)

    page = s3.list_objects_v2(Bucket=bucket, Prefix="l/", StartAfter="l/c.txt")
    expect([o["Key"] for o in page["Contents"]] == ["l/d/1.txt", "l/d/2.txt", "l/e/1.txt", "l/f.txt"], "StartAfter", page.get("Contents"))
    one = s3.list_objects_v2(Bucket=bucket, Prefix="l/a.txt")["Contents"][0]
    expect(one["Size"] == len(b"l/a.txt") and one["ETag"] == '"%s"' % hashlib.md5(b"l/a.txt").hexdigest(), "a listed object's Size and ETag", one)


def delete_quiet(bucket):
    s3 = client()
    keys = [f"q/{i}.txt" for i in range(5)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[:3]] + [{"Key": "q/none"}], "Quiet": True})
    expect(not r.get("Deleted") and not r.get("Errors"), "Quiet: no Deleted, no Errors", r)
    left = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, Prefix="q/").get("Contents", [])]
    expect(left == keys[3:], "the three are gone, the two left", left)
    r = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in keys[3:]]})
    expect(sorted(d["Key"] for d in r.get("Deleted", [])) == keys[3:], "not Quiet: each deleted key listed", r)


def errors(bucket, public_key_id):
    s3 = client()
    s3.put_object(Bucket=bucket, Key="e/here.txt", Body=b"here")
    seen = error_of(lambda: client(secret="x" * 40).get_object(Bucket=bucket, Key="e/here.txt"))
    expect(seen == (403, "SignatureDoesNotMatch"), "a wrong secret: 403 SignatureDoesNotMatch", seen)
    seen = error_of(lambda: client(access_key="key_" + "0" * 24).list_objects_v2(Bucket=bucket))
    expect(seen == (403, "InvalidAccessKeyId"), "an unknown access key: 403 InvalidAccessKeyId", seen)
    seen = error_of(lambda: client(access_key=public_key_id).list_objects_v2(Bucket=bucket))
    expect(seen == (403, "InvalidAccessKeyId"), "a public key's id: 403 InvalidAccessKeyId", seen)
    seen = error_of(lambda: s3.get_object(Bucket=bucket, Key="e/missing.txt"))
    expect(seen == (404, "NoSuchKey"), "GET of a missing key: 404 NoSuchKey", seen)

    def absent(key):
        """Whether HEAD of `key` is 404 (what it saw is printed when not). A 5xx says
        nothing either way (this client does not retry): asked again, up to 5 times."""
        for _ in range(5):
            seen = error_of(lambda: s3.head_object(Bucket=bucket, Key=key))
            if seen[0] < 500:
                break
            print("HEAD %s: %r, asked again" % (key, seen), file=sys.stderr)
        if seen[0] != 404:
            print("HEAD %s after a refused PUT: %r" % (key, seen), file=sys.stderr)
        return seen[0] == 404

    seen = error_of(lambda: s3.put_object(Bucket=bucket, Key="e/md5-bad.txt", Body=b"abc", ContentMD5="not base64!"))
    expect(seen == (400, "InvalidDigest"), "a Content-MD5 that is no MD5: 400 InvalidDigest", seen)
    expect(absent("e/md5-bad.txt"), "nothing stored after InvalidDigest")
    other = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    seen = error_of(lambda: s3.put_object(Bucket=bucket, Key="e/md5-wrong.txt", Body=b"abc", ContentMD5=other))
    expect(seen == (400, "BadDigest"), "a wrong Content-MD5: 400 BadDigest", seen)
    expect(absent("e/md5-wrong.txt"), "nothing stored after a wrong Content-MD5")
    seen = error_of(lambda: s3.put_object(Bucket=bucket, Key="e/crc-wrong.txt", Body=b"abc", ChecksumCRC32="AAAAAA=="))
    expect(seen == (400, "BadDigest"), "a wrong x-amz-checksum-crc32: 400 BadDigest", seen)
    expect(absent("e/crc-wrong.txt"), "nothing stored after a wrong checksum")
    crc = s3.put_object(Bucket=bucket, Key="e/crc-right.txt", Body=b"abc", ChecksumCRC32="NSRBwg==")
    expect(crc.get("ChecksumCRC32") == "NSRBwg==", "the right CRC32 is stored and echoed", crc.get("ChecksumCRC32"))

    # A document over the door's 2 MiB: 400, never a 500.
    big = {"Objects": [{"Key": "e/" + "k" * 1000 + str(i)} for i in range(2200)]}
    seen = error_of(lambda: s3.delete_objects(Bucket=bucket, Delete=big))
    expect(seen == (400, "MaxMessageLengthExceeded"), "a DeleteObjects of 2.2 MB: 400 MaxMessageLengthExceeded", seen)
    expect(not absent("e/here.txt"), "nothing deleted by it")

    # A header added after signing (what a man in the middle could do): 403.
    def unsigned_acl(request, **_):
        request.headers["x-amz-acl"] = "public-read"

    s3.meta.events.register("before-send.s3.PutObject", unsigned_acl)
    seen = error_of(lambda: s3.put_object(Bucket=bucket, Key="e/unsigned.txt", Body=b"abc"))
    s3.meta.events.unregister("before-send.s3.PutObject", unsigned_acl)
    expect(seen == (403, "AccessDenied"), "an x-amz-* header the signature does not cover: 403 AccessDenied", seen)
    expect(absent("e/unsigned.txt"), "nothing stored after an unsigned x-amz-acl")


CASES = {"presign": presign, "post_policy": post_policy, "listing": listing, "delete_quiet": delete_quiet, "errors": errors}

if __name__ == "__main__":
    CASES[sys.argv[1]](*sys.argv[2:])
    print(json.dumps({"case": sys.argv[1], "ok": True}))
