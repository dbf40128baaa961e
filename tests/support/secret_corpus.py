"""A corpus of secrets in the shapes they take in real work, and look-alikes that are not secrets.

Every value is made up (or a vendor's documented example) but has the exact format of the real
thing. :data:`SECRETS` maps a kind to a text as it would appear in a command, a file, a prompt or
a tool's output, and the part of it that must never be kept verbatim. :data:`NOT_SECRETS` must
come through the redactor unchanged. The redactor tests, the secret corpus test and the upgrade's
re-redaction test all read this one list.
"""

from __future__ import annotations

import random
from typing import NamedTuple


class Secret(NamedTuple):
    """One secret in context."""

    kind: str  # the [REDACTED:<kind>] marker expected
    text: str  # the text as it appears
    secret: str  # what must not survive verbatim


PEM = ("-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Bz1f0yWw5rj\n"
       "-----END RSA PRIVATE KEY-----")
GCP_PEM = ("-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"
           "\\n-----END PRIVATE KEY-----\\n")

SECRETS: tuple[Secret, ...] = (
    # Found by the redactor before issue 13.
    Secret("aws-access-key", "aws configure set aws_access_key_id AKIAIOSFODNN7EXAMPLE",
           "AKIAIOSFODNN7EXAMPLE"),
    Secret("secret-assignment", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Secret("github-token", "git clone https://x:ghp_R4nd0mT0k3nV4lu3Xy123456789012345678@github.com"
           "/acme/app", "ghp_R4nd0mT0k3nV4lu3Xy123456789012345678"),
    Secret("slack-token", "SLACK=xoxb-2417308183-5528462981-Zq8QmNw7ERkT3yXcVbLp",
           "xoxb-2417308183-5528462981-Zq8QmNw7ERkT3yXcVbLp"),
    Secret("stripe-key", "stripe.api_key = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'",
           "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    Secret("openai-key", "client = OpenAI(key='sk-proj-Hq7rT2vX9kLmN4pQ8sW1yZ3bC6dF0gJ5')",
           "sk-proj-Hq7rT2vX9kLmN4pQ8sW1yZ3bC6dF0gJ5"),
    Secret("anthropic-key", "export ANTHROPIC_KEY=sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed",
           "sk-ant-api03-Zx9Yw8Vu7Ts6Rq5Po4Nm3Lk2Jh1Gf0Ed"),
    Secret("private-key", f"cat deploy.pem\n{PEM}\n",
           "MIIEpAIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM2Bz1f0yWw5rj"),
    Secret("jwt", "token eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N",
           "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N"),
    Secret("url-password", "DATABASE_URL=postgres://app:Hunter2Pass@db.internal:5432/app",
           "Hunter2Pass"),
    Secret("secret-assignment", "API_KEY=f3b1c2d4e5a6978812ab", "f3b1c2d4e5a6978812ab"),
    Secret("private-key", f'{{"type": "service_account", "private_key": "{GCP_PEM}"}}',
           "MIIEvQIBADANBgkqhkiG9w0BAQEFAASCBKcwggSjAgEAAoIBAQC7"),
    Secret("bearer-token", "curl -H 'Authorization: Bearer 8f2kQ9xLmN3pR7tV1wY5zA' https://api",
           "8f2kQ9xLmN3pR7tV1wY5zA"),
    Secret("npm-token", "//registry.npmjs.org/:_authToken=npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6",
           "npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6"),
    Secret("google-api-key", "maps.js?key=AIzaSyD4f7Kq2Lm9Np3Rs6Tv8Wx1Yz5Ab0Cd3Ef6",
           "AIzaSyD4f7Kq2Lm9Np3Rs6Tv8Wx1Yz5Ab0Cd3Ef6"),
    Secret("secret-assignment", "X-Api-Key: 9d8c7b6a5f4e3d2c1b0a", "9d8c7b6a5f4e3d2c1b0a"),
    Secret("gitlab-token", "GL=glpat-Xy9Zw8Vu7Ts6Rq5Po4Nm", "glpat-Xy9Zw8Vu7Ts6Rq5Po4Nm"),
    Secret("huggingface-token", "huggingface-cli login hf_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc",
           "hf_Qw3Er5Ty7Ui9Op1As3Df5Gh7Jk9Lz1Xc"),
    # Passed the redactor before issue 13.
    Secret("url-password", "REDIS_URL=redis://:S3cretRedisPw@cache.internal:6379/0",
           "S3cretRedisPw"),
    Secret("azure-key", "DefaultEndpointsProtocol=https;AccountName=acmestore;AccountKey=Eby8vdM0"
           "2xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;"
           "EndpointSuffix=core.windows.net",
           "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw"),
    Secret("sendgrid-key", "sg = SendGridAPIClient('SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqe"
           "F8tAmbihYzrnopKc-1s5cr')", "SG.ngeVfQFYQlKU0ufo8x5d1A.TwL2iGABf9DHoTf-09kqeF8tAmbihYzr"
           "nopKc-1s5cr"),
    Secret("cli-password", "curl -s -u admin:Tr0ub4dor3xyz https://api.example.com/v1/items",
           "Tr0ub4dor3xyz"),
    Secret("cli-password", "mysql -h db.internal -u root -pS3cur3Pw0rd app_db < dump.sql",
           "S3cur3Pw0rd"),
    Secret("aws-secret-key", "the key is wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for staging",
           "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    Secret("secret-assignment", '{"type": "service_account", "private_key_id": '
           '"3f4e1a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f", "client_email": "ci@acme.iam"}',
           "3f4e1a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f"),
)

# Kinds the corpus covers; every one of the redactor's patterns appears at least once.
KINDS = frozenset(secret.kind for secret in SECRETS)

NOT_SECRETS: tuple[str, ...] = (
    "git show e83c5163316f89bfbde7d9ab23ca2e25604af290",
    "[main 3f4e1a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d4e3f] Fix the flaky upload test",
    "headers: {'API-Key': process.env.DATA_API_KEY}",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "password=$DB_PASSWORD",
    "api_key = os.environ['OPENAI_API_KEY']",
    "docker run -u 1000:1000 --rm app",
    "mysql -h db -P 3306 -u root -p app_db",
    "curl -u admin https://api.example.com",
    "see https://example.com/a/b and redis://cache:6379/0",
    "sha256: DA39A3EE5E6B4B0D3255BFEF95601890AFD80709",
    "max_tokens = 200000",
)


def generated(seed: int, per_secret: int) -> list[Secret]:
    """``per_secret`` variants of every corpus secret: the same text around it, the secret
    itself re-drawn character by character (a capital for a capital, a digit for a digit …)
    after its first characters, which carry the format's prefix (``ghp_``, ``AKIA``, ``SG.``)."""
    draw = random.Random(seed)
    pools = {str.isupper: "ABCDEFGHIJKLMNOPQRSTUVWXYZ", str.islower: "abcdefghijklmnopqrstuvwxyz",
             str.isdigit: "0123456789"}
    variants = []
    for case in SECRETS:
        # The prefix, and a JWT's second "eyJ" (every segment of one is base64 JSON), stay.
        kept = set(range(min(8, len(case.secret) // 3)))
        start = case.secret.find("eyJ", 1)
        kept |= set(range(start, start + 3)) if start > 0 else set()
        for _ in range(per_secret):
            new = "".join(
                ch if i in kept else
                next((draw.choice(pool) for test, pool in pools.items() if test(ch)), ch)
                for i, ch in enumerate(case.secret))
            variants.append(Secret(case.kind, case.text.replace(case.secret, new), new))
    return variants
