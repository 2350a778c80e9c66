pytest_plugins = ["localgate_testing.pytest_plugin"]
