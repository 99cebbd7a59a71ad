#!/bin/sh
# Writes the secrets docker-compose.yml needs into an env file (default: .env beside
# docker-compose.yml, which compose reads), readable by you alone: a tokens file with an
# admin token and the dream service's token, the delegation key every service shares, and
# the dream service's token again for the dream service itself. Prints the admin token.
#
#   sh deploy/new-secrets.sh [ENV_FILE]
#
# It never replaces secrets: if the file already holds them, it stops.
set -eu

env_file=${1:-"$(dirname "$0")/../.env"}

if [ -e "$env_file" ] && grep -q '^KNOWHUB_TOKENS_JSON=' "$env_file"; then
    echo "$env_file already holds KnowHub secrets: edit it, or remove them to make new ones" >&2
    exit 1
fi

# URL-safe base64 of N random bytes.
random() {
    head -c "$1" /dev/urandom | base64 | tr -d '\n=' | tr '+/' '-_'
}

admin=$(random 32)
dream=$(random 32)
delegation_key=$(random 48)

umask 077
cat >> "$env_file" <<SECRETS
# KnowHub's secrets for docker-compose.yml (sh deploy/new-secrets.sh). Each container sees
# them only as files in /run/secrets that its own user alone can read. Add tokens to the
# list as deploy/tokens.example.json shows.
KNOWHUB_TOKENS_JSON='{"tokens": [
  {"token": "$admin", "user_id": "admin", "org_id": "example", "roles": ["admin"]},
  {"token": "$dream", "user_id": "dream-service", "org_id": "example",
   "roles": ["dreamer", "evaluator"]}
]}'
KNOWHUB_DELEGATION_KEY=$delegation_key
KNOWHUB_DREAM_SERVICE_TOKEN=$dream
SECRETS
chmod 600 "$env_file"
echo "wrote KnowHub's secrets to $env_file (readable by you alone); the admin token: $admin"
