"""What the object-storage tests ask of moto's S3 server, through boto3 (which moto brings).

    s3tool.py ENDPOINT setup                    -> "KEY SECRET": an IAM user with every right
    s3tool.py ENDPOINT session KEY SECRET       -> "KEY SECRET TOKEN": a role's session credentials
    s3tool.py ENDPOINT mkbucket KEY SECRET BUCKET
    s3tool.py ENDPOINT put KEY SECRET BUCKET OBJECT FILE
    s3tool.py ENDPOINT list KEY SECRET BUCKET PREFIX -> one key per line
"""
import json
import sys

import boto3

endpoint, command, *args = sys.argv[1:]


def client(service, key, secret):
    return boto3.client(service, endpoint_url=endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret)


allow_all = json.dumps({"Version": "2012-10-17",
                        "Statement": [{"Effect": "Allow", "Action": "*", "Resource": "*"}]})
if command == "setup":
    # The server's first three calls need no signature (INITIAL_NO_AUTH_ACTION_COUNT=3).
    iam = client("iam", "bootstrap", "bootstrap")
    iam.create_user(UserName="pipelinehost")
    iam.put_user_policy(UserName="pipelinehost", PolicyName="all", PolicyDocument=allow_all)
    key = iam.create_access_key(UserName="pipelinehost")["AccessKey"]
    print(key["AccessKeyId"], key["SecretAccessKey"])
elif command == "session":
    key, secret = args
    iam = client("iam", key, secret)
    trust = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]})
    role = iam.create_role(RoleName="reader", AssumeRolePolicyDocument=trust)["Role"]
    iam.put_role_policy(RoleName="reader", PolicyName="all", PolicyDocument=allow_all)
    found = client("sts", key, secret).assume_role(RoleArn=role["Arn"], RoleSessionName="tests")["Credentials"]
    print(found["AccessKeyId"], found["SecretAccessKey"], found["SessionToken"])
elif command == "mkbucket":
    key, secret, bucket = args
    client("s3", key, secret).create_bucket(Bucket=bucket)
elif command == "put":
    key, secret, bucket, name, path = args
    with open(path, "rb") as body:
        client("s3", key, secret).put_object(Bucket=bucket, Key=name, Body=body.read(), ContentType="image/jpeg")
elif command == "list":
    key, secret, bucket, prefix = args
    pages = client("s3", key, secret).get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
    for page in pages:
        for item in page.get("Contents", []):
            print(item["Key"])
else:
    sys.exit("unknown command " + command)
